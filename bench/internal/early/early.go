// Package early has no code: it imports the two packages at the end of the
// longest chains of compiles in ocbench, the SQLite driver (modernc.org/sqlite,
// used by transcript and cacheprofile) and the Prometheus client (used by
// gateway), so that package bench, which imports this package before any
// other of the module (its path sorts first among bench's imports), makes go
// build reach them first.
//
// Why: the go command starts ready compile actions in the order of a
// depth-first walk of the imports, each package's imports in sorted order.
// modernc.org/libc -> modernc.org/sqlite/lib is the longest chain (about 40%
// of the CPU time of a fresh build, and sequential), but the walk reached it
// only after most other packages: on two cores it started at 600 s of a
// 1,038 s fresh build (load ~20) and everything else waited for it at the
// end. Reached first, it started at 276 s; the protobuf -> Prometheus chain
// then came last (start 818 s, the new critical path), so it is reached
// first too. Neither adds anything to the binary: both are linked anyway.
package early

import (
	_ "github.com/prometheus/client_golang/prometheus" // see the package comment
	_ "modernc.org/sqlite"                             // see the package comment
)
