//go:build unix

package compact

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs cmd in its own process group and makes a timeout
// kill the whole group, so a summariser pipeline cannot outlive it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
