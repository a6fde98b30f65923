package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// A new WAL file starts at its working size.
//
// SQLite creates the WAL file empty when the store opens and appends to
// it until the log first restarts, which under continuous writes happens
// at the backstop (checkpoint.go): the first 16,384 frames, about 64 MiB.
// Every commit of that first pass grows the file, so the syncer's
// fdatasync must also write the file's new size, a journal commit of the
// file system; later passes overwrite blocks the file already has and
// sync the data alone. On this machine's ext4 an 8 KiB write and its
// fdatasync took 169 µs at the median appending and 89 µs overwriting.
//
// So before the writer connection opens a database that has no WAL file,
// preallocateWAL creates one of walPreallocBytes zeros, written and
// synced. Zeros, not fallocate: a range fallocated on ext4 is "unwritten"
// until written, and converting it is the same metadata change.
// PostgreSQL fills its new WAL segments with zeros for the same reason
// (wal_init_zero).
//
// Why SQLite reads such a file as empty, and a crash loses nothing more:
// the first 32 bytes of a WAL file are its header, with a magic number,
// the page size, a checkpoint sequence, two salts and a checksum; a
// header of zeros is invalid, and SQLite treats the log as empty and
// writes a new header with its first frame (wal.c, walIndexRecover and
// sqlite3WalFrames). Recovery reads frames from the header on and stops
// at the first whose salts or checksum do not match: a frame of zeros
// never does, exactly as a frame left over from the log's previous pass
// never does. SQLite never truncates the file (journal_size_limit is
// left at -1 and checkpoints are PASSIVE), and deletes it when the last
// connection closes, so a later Open preallocates again.
//
// Only a file that does not exist is created (O_EXCL): an existing WAL
// may hold committed frames, and is left as it is. Nothing writes the
// file while it is filled: this store's writer has not opened the
// database yet, and a second writer of it would be a second server,
// which the data directory's lock (package datadir, taken by the server
// and by fairway migrate before they open the store) refuses; a reader
// that opens the database meanwhile finds a log of zeros, which is
// empty. A failure (a full disk) removes the file this call created and
// leaves SQLite to create its own, as before: preallocation saves time,
// nothing needs it to work.

// walPreallocBytes is the size a new WAL file is created with: the WAL
// header and backstopPages frames of a 24-byte header and a page each,
// the size the log reaches under continuous writes before it restarts.
const walPreallocBytes = 32 + backstopPages*(24+pageSize)

// preallocateWAL creates the WAL file of the database file dbPath, unless
// it exists, as size bytes of zeros, synced, with the database file's
// permissions. It reports whether it created the file.
func preallocateWAL(dbPath string, size int64) (created bool, err error) {
	walPath := dbPath + "-wal"
	db, err := os.Stat(dbPath)
	if err != nil {
		return false, fmt.Errorf("preallocate WAL: %w", err)
	}
	f, err := os.OpenFile(walPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, db.Mode().Perm())
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("preallocate WAL: %w", err)
	}
	if err := fillLikeSQLite(f, db, size); err != nil {
		_ = f.Close()
		return false, errors.Join(fmt.Errorf("preallocate WAL: %w", err), os.Remove(walPath))
	}
	if err := f.Close(); err != nil {
		return false, errors.Join(fmt.Errorf("preallocate WAL: %w", err), os.Remove(walPath))
	}
	return true, nil
}

// fillLikeSQLite gives f the database file's permissions, whatever the
// umask, and its owner when the process runs as root, as SQLite's unix
// VFS does for a WAL file it creates, then fills it with size zeros.
func fillLikeSQLite(f *os.File, db os.FileInfo, size int64) error {
	if err := f.Chmod(db.Mode().Perm()); err != nil {
		return err
	}
	if st, ok := db.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		if err := f.Chown(int(st.Uid), int(st.Gid)); err != nil {
			return err
		}
	}
	return fillZeros(f, size)
}

// fillZeros writes size zero bytes to f from its start and syncs them.
func fillZeros(f *os.File, size int64) error {
	zeros := make([]byte, 1<<20)
	for off := int64(0); off < size; {
		n := int(min(int64(len(zeros)), size-off))
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += int64(n)
	}
	return syncData(f)
}
