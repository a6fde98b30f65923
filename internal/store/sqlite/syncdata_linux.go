package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncData makes f's data durable with fdatasync(2): the bytes written and
// the metadata needed to read them back (the size, when a write grew the
// file), but not the timestamps that every write changes. A WAL commit
// needs no more: recovery reads frames, never mtime. With fsync, ext4
// also commits the inode's new mtime to its journal on every call, while
// the writer keeps appending; bench steady served ran 1.04x the jobs with
// fdatasync (12 alternating pairs, 2026-11-28).
func syncData(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if serr = unix.Fdatasync(int(fd)); serr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
