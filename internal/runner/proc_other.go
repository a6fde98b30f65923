//go:build !linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

// The runner relies on Linux specifics (Pdeathsig, waitid with WNOWAIT);
// elsewhere Run fails with ClassStartError so that the module still builds.

func platformError() error {
	return fmt.Errorf("process runner on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func sysProcAttr() *syscall.SysProcAttr { return nil }

type group struct{ pgid int }

func (group) terminate() {}
func (group) kill()      {}

func waitExited(int) error { return errors.ErrUnsupported }

func decodeExit(ps *os.ProcessState) exitInfo { return exitInfo{code: ps.ExitCode()} }

var oomKills = func() (uint64, bool) { return 0, false }

// MarkerEnv names the environment variable every job process carries.
const MarkerEnv = "FAIRWAY_RUN"

func newMarker() string { return "" }

// SetSubreaper is unsupported here.
func SetSubreaper() error { return errors.ErrUnsupported }

func killOrphans(string) (struct{}, int) { return struct{}{}, 0 }

func reapOrphans() {}

type orphanUsage struct{}

func (*orphanUsage) add(struct{}, int) {}

func processUsage(*os.ProcessState, orphanUsage) Usage { return Usage{} }

type jobCgroup struct{}

func jobCgroupFor(Spec) *jobCgroup             { return nil }
func (*jobCgroup) attach(*syscall.SysProcAttr) {}
func (*jobCgroup) started()                    {}
func (*jobCgroup) remove()                     {}
func (*jobCgroup) kill(time.Duration)          {}
func (*jobCgroup) usage() (Usage, bool)        { return Usage{}, false }

// JobCgroupParent is unsupported here.
func JobCgroupParent() (string, error) { return "", errors.ErrUnsupported }

// SweepCgroups does nothing here.
func SweepCgroups(string) int { return 0 }

// SweepOrphans does nothing here.
func SweepOrphans() int { return 0 }

func beginSpawn()    {}
func endSpawn()      {}
func addRoot(int)    {}
func removeRoot(int) {}
