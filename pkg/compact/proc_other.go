//go:build !unix

package compact

import "os/exec"

// setProcessGroup: without process groups a timeout kills the shell only.
func setProcessGroup(*exec.Cmd) {}
