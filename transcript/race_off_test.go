//go:build !race

package transcript

const raceEnabled = false
