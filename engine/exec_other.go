//go:build !unix

package engine

import "os/exec"

// killGroupOnCancel leaves cmd as exec.CommandContext made it: without
// process groups, cancellation kills the shell alone.
func killGroupOnCancel(cmd *exec.Cmd) {}
