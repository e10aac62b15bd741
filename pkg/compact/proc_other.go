//go:build !unix

package compact

import "os/exec"

// setProcessGroup: without process groups only the shell can be stopped.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the shell only.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
