//go:build !linux

package wireenc_test

import "time"

// threadCPU is unavailable here; benchmarks then report no CPU metric.
func threadCPU() time.Duration { return 0 }
