//go:build !race

package provider

// checkCaches: see check_race.go; compiled out here.
const checkCaches = false
