package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ocbench/ocbench/transcript"
)

// storeScenarios measure appending one turn (4 message entries, then
// EndTurn) to the database session stores, per durability policy, beside
// the JSONL ones of transcriptScenarios: OpenClaw's SQLite store always,
// PostgreSQL when OCBENCH_BENCH_POSTGRES_URL (or the tests'
// OCBENCH_TEST_POSTGRES_URL) names a server.
func storeScenarios() ([]Scenario, error) {
	turn := transcriptTurn(7)
	payload := 0
	for i := range turn {
		payload += len(turn[i].AppendJSON(nil))
	}
	pgURL := os.Getenv("OCBENCH_BENCH_POSTGRES_URL")
	if pgURL == "" {
		pgURL = os.Getenv("OCBENCH_TEST_POSTGRES_URL")
	}
	type store struct {
		kind string
		open func() (transcript.Store, func(), error)
	}
	stores := []store{{"sqlite", func() (transcript.Store, func(), error) {
		dir, err := os.MkdirTemp("", "ocbench-bench-store-")
		if err != nil {
			return nil, nil, err
		}
		st, err := transcript.OpenSQLiteStore(filepath.Join(dir, "agent", "openclaw-agent.sqlite"), transcript.SQLiteOptions{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return st, func() { st.Close(); os.RemoveAll(dir) }, nil
	}}}
	// PostgreSQL is measured in programs that link transcript/pgstore
	// (ocbench built with -tags postgres).
	if pgURL != "" && transcript.StoreRegistered("postgres") {
		stores = append(stores, store{"postgres", func() (transcript.Store, func(), error) {
			st, err := transcript.OpenStore(context.Background(), pgURL)
			if err != nil {
				return nil, nil, err
			}
			return st, func() { st.Close() }, nil
		}})
	}
	var scs []Scenario
	for _, s := range stores {
		for _, pol := range []struct {
			input string
			d     transcript.Durability
		}{{"fsync-entry", transcript.SyncEntry}, {"fsync-turn", transcript.SyncTurn}, {"none", transcript.SyncNone}} {
			s, pol := s, pol
			input := s.kind + "-" + pol.input
			scs = append(scs, Scenario{
				Name: "transcript-append/" + input, Stage: "transcript-append", Input: input, Impl: Ours,
				Bytes: int64(payload), Events: int64(len(turn)), Latency: true,
				Setup: func() (func() error, func(), error) {
					st, closeStore, err := s.open()
					if err != nil {
						return nil, nil, err
					}
					id := fmt.Sprintf("bench-%d", time.Now().UnixNano())
					w, err := st.Open(context.Background(), id, transcript.WriterOptions{Durability: pol.d, Cwd: "/home/u/project"})
					if err != nil {
						closeStore()
						return nil, nil, err
					}
					teardown := func() { w.Close(); closeStore() }
					first := true
					return func() error {
						for i := range turn {
							if _, err := w.AppendMessage(&turn[i]); err != nil {
								return err
							}
						}
						if err := w.EndTurn(); err != nil {
							return err
						}
						if first {
							first = false
							sc, err := transcript.ReadStoreContext(context.Background(), st, id)
							if err != nil {
								return err
							}
							if len(sc.Messages) != len(turn) || sc.Messages[3].TextContent() != turn[3].TextContent() {
								return fmt.Errorf("transcript-append/%s: %d messages read back, want %d", input, len(sc.Messages), len(turn))
							}
						}
						return nil
					}, teardown, nil
				},
			})
		}
	}
	return scs, nil
}
