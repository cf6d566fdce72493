//go:build !race

package scripted

const raceEnabled = false
