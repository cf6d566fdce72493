//go:build !linux

package prompt

import "testing"

func cpuLoop(b *testing.B, f func()) {
	for b.Loop() {
		f()
	}
}
