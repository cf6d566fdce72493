//go:build race

package prompt

// raceEnabled: the race detector makes sync.Pool drop items at random and
// adds allocations, so allocation-count tests are skipped under it.
const raceEnabled = true
