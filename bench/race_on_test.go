//go:build race

package bench

// raceEnabled: the race detector adds allocations, so allocation-count
// tests are skipped under it.
const raceEnabled = true
