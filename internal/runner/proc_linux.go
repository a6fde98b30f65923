//go:build linux

package runner

import (
	"os"
	"syscall"
	"unsafe"
)

func platformError() error { return nil }

// sysProcAttr puts the child in a new process group (pgid = its pid) and
// asks the kernel to SIGKILL it when the thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// group is the child's process group. Its id is the child's pid, and stays
// reserved while the child is unreaped (even as a zombie), so signalling the
// group before cmd.Wait can never hit an unrelated process.
type group struct{ pgid int }

func (g group) terminate() { g.signal(syscall.SIGTERM) }
func (g group) kill()      { g.signal(syscall.SIGKILL) }

func (g group) signal(sig syscall.Signal) {
	// ESRCH (empty group) is the expected, harmless case; EPERM cannot
	// happen for our own descendants.
	_ = syscall.Kill(-g.pgid, sig)
}

const pPID = 1 // idtype_t P_PID

// waitExited blocks until the process pid has exited, without reaping it
// (waitid with WNOWAIT), so that its pid, and thus the group id, stays
// reserved until cmd.Wait.
func waitExited(pid int) error {
	var info [128]byte // siginfo_t; contents unused
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			if errno != 0 {
				return os.NewSyscallError("waitid", errno)
			}
			return nil
		}
	}
}

// decodeExit reads how the process ended from its ProcessState.
func decodeExit(ps *os.ProcessState) exitInfo {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return exitInfo{code: ps.ExitCode()}
	}
	sig := ws.Signal()
	return exitInfo{code: -1, signal: sig.String(), killed: sig == syscall.SIGKILL}
}
