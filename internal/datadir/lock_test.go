package datadir

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecondLockIsRefusedWithTheHoldersPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) || locked.PID != os.Getpid() {
		t.Fatalf("second Acquire: %v, want a LockedError naming pid %d", err, os.Getpid())
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("message %q does not name the holder", err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	again.Release()
}

// A lock held by a process that died (SIGKILL included) is free: the kernel
// drops a flock with its holder.
func TestLockOfADeadProcessIsFree(t *testing.T) {
	dir := t.TempDir()
	holder := exec.Command("flock", "--exclusive", "--nonblock", filepath.Join(dir, LockFile), "true")
	if _, err := exec.LookPath("flock"); err != nil {
		holder = exec.Command("true")
	}
	if out, err := holder.CombinedOutput(); err != nil {
		t.Fatalf("holder: %v %s", err, out)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder exited: %v", err)
	}
	l.Release()
}
