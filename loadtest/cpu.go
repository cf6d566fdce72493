package loadtest

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"
)

// ProcessCPU returns the CPU time (user and system, every thread) that
// process pid has used, from /proc/PID/stat (Linux; elsewhere an error).
// The kernel counts it in clock ticks of 10 ms (USER_HZ is 100 on every
// Linux ABI), so a run should use seconds of CPU for a precise figure.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

var errProcStat = errors.New("loadtest: unreadable /proc/PID/stat")

// parseProcStat reads utime and stime, the 14th and 15th fields, counted
// after the command name's closing parenthesis (the name itself may hold
// spaces and parentheses).
func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errProcStat
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime 15.
	if len(f) < 13 {
		return 0, errProcStat
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return 0, errProcStat
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
