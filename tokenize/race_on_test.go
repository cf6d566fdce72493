//go:build race

package tokenize

// raceEnabled: the race detector makes sync.Pool drop items on purpose, so
// pooled memory is reallocated and allocation counts are meaningless.
const raceEnabled = true
