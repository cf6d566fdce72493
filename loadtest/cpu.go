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

// ProcessRSS returns the resident memory of process pid in bytes, from
// the VmRSS line of /proc/PID/status (Linux; elsewhere an error): what
// the gateway's process_resident_memory_bytes says, read without making
// the gateway serve a /metrics page for every poll.
func ProcessRSS(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

func parseVmRSS(b []byte) (uint64, error) {
	_, rest, ok := bytes.Cut(b, []byte("\nVmRSS:"))
	if !ok {
		return 0, errors.New("loadtest: no VmRSS in /proc/PID/status")
	}
	f := bytes.Fields(rest)
	if len(f) < 2 || string(f[1]) != "kB" {
		return 0, errors.New("loadtest: unreadable VmRSS in /proc/PID/status")
	}
	kb, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil {
		return 0, errors.New("loadtest: unreadable VmRSS in /proc/PID/status")
	}
	return kb << 10, nil
}
