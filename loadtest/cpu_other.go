//go:build !unix

package loadtest

import (
	"errors"
	"time"
)

func selfCPU() (time.Duration, error) {
	return 0, errors.New("loadtest: no process CPU time on this system")
}
