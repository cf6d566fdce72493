package transcript_test

import (
	"context"
	"time"

	"github.com/ocbench/ocbench/transcript"
	"github.com/ocbench/ocbench/transcript/pgstore"
)

// The contract suite of store_test.go runs on PostgreSQL through the
// pgstore package, linked here.
func init() {
	transcript.PGOpenForTest = func(ctx context.Context, url string, ttl time.Duration, holder string) (transcript.Store, error) {
		return pgstore.Open(ctx, url, pgstore.Options{LeaseTTL: ttl, Holder: holder})
	}
	transcript.PGExecForTest = func(ctx context.Context, s transcript.Store, sql string, args ...any) error {
		_, err := s.(*pgstore.Store).Pool().Exec(ctx, sql, args...)
		return err
	}
}
