//go:build !unix

package streamwrap

import "time"

func processCPU() time.Duration { return 0 }
