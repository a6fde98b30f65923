//go:build !linux

package sqlite

import "os"

// syncData makes f's data durable: fsync(2) where fdatasync is not used
// (syncdata_linux.go).
func syncData(f *os.File) error { return f.Sync() }
