//go:build !race

package streamwrap

const raceEnabled = false
