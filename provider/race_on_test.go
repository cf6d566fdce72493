//go:build race

package provider

// raceEnabled: sync.Pool drops items at random under the race detector, so
// the allocation tests cannot hold there.
const raceEnabled = true
