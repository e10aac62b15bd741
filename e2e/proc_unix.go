//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and makes cancellation kill
// the whole group: the Codex launcher (node) starts the native binary as a
// child, which would otherwise survive a timeout.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
