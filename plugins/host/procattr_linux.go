package host

import (
	"os/exec"
	"syscall"
)

// dieWithHost asks the kernel to kill the plugin when cmpbench dies, however it dies
// (SIGKILL included), so that no plugin keeps its connections open to a target.
func dieWithHost(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
