package transcript

import (
	"context"
	"time"
)

// The store tests' PostgreSQL hooks. Package transcript cannot import
// transcript/pgstore (which imports it), so pglink_test.go, of the
// external test package, links pgstore into this test binary and sets
// them.
var (
	// PGOpenForTest opens a PostgreSQL store with a lease TTL and holder
	// name ("": a random one).
	PGOpenForTest func(ctx context.Context, url string, leaseTTL time.Duration, holder string) (Store, error)
	// PGExecForTest runs one statement on a PostgreSQL store's database.
	PGExecForTest func(ctx context.Context, s Store, sql string, args ...any) error
)
