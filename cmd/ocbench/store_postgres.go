//go:build postgres

package main

// Built with -tags postgres (go build -tags postgres ./cmd/ocbench), ocbench
// links the PostgreSQL session store: serve --sessions, run --sessions and
// cache-profile then take postgres://... names. Without the tag the driver
// (pgx) is not compiled at all.
import _ "github.com/ocbench/ocbench/transcript/pgstore"
