//go:build race

package provider

// checkCaches: under the race detector (the tests' usual build), the
// decoder's caches are checked against what they save on every use
// (lane.go's slot); a mismatch is a bug, and panics.
const checkCaches = true
