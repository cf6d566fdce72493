// Package bench is ocbench's benchmark harness: the scenarios that measure
// every stage of a turn (SSE decoding per wire format, the decorator chain,
// argument repair, prompt assembly cold and warm, token counting, transcript
// appends per durability policy, a whole turn in process and over loopback
// HTTP), a runner that measures them as testing.B does (time per operation,
// MB/s and events/s, allocations, latency percentiles), and the reports:
// a table, JSON, Go benchmark lines for benchstat, and a self-contained
// HTML page.
//
// It does not hold the peers it compares against: those live in the
// separate module ./peers (so that embedding ocbench never pulls in the
// SDKs) and run through RunPeers on the same generated inputs.
package bench

// Reaches the SQLite driver first in go build's walk: see package early.
import _ "github.com/ocbench/ocbench/bench/internal/early"
