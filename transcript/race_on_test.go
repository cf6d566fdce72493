//go:build race

package transcript

// raceEnabled: the race detector slows the property tests tenfold; they
// check fewer random histories under it.
const raceEnabled = true
