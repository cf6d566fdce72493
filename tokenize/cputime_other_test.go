//go:build !linux

package tokenize

import "testing"

func cpuLoop(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}
