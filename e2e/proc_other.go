//go:build !unix

package e2e

import "os/exec"

// killGroup: without process groups, cancellation kills the direct child
// only (exec.CommandContext's default).
func killGroup(*exec.Cmd) {}
