package sqlite

// One write per commit: the "fairway-walbuf" VFS (walbuf.c).
//
// SQLite writes a WAL frame as two pwrite calls, its 24-byte header and
// then its page (wal.c, walWriteOneFrame), so a drain commit of ~39 frames
// made ~78 system calls and a steady one ~22: 2.5 pwrites per drained job
// (perf stat, 50,000 jobs), 5% of the process's samples in
// __x64_sys_pwrite64 alone on a machine where a system call costs 1-2 µs.
// Every connection of the store opens the database through a VFS that
// wraps SQLite's "unix" VFS and changes one thing: the writes to a WAL file
// that continue the previous write are gathered in a buffer and written
// with one pwrite, at the latest when the commit's last frame has been
// written. A buffer holds at most 128 KiB (less one byte: the most the
// unix VFS writes in one call), so a commit of more takes one write per
// 128 KiB: a drain commit of 4 KiB pages two, not ~78. Every other file, and every other method, passes
// straight through to the unix VFS.
//
// Why nobody sees the difference. The buffer is written out (flushed):
//
//   - before any other call on the WAL file: a read (the writer reading
//     back a frame it spilled; a checkpoint copying frames), a sync, its
//     size, a truncation, a lock, a file control, its close; and before
//     any write that does not continue the previous one, which then goes
//     straight to the file (a frame overwritten within its transaction,
//     walRewriteChecksums fixing the checksums of earlier frames at
//     commit, the WAL header at offset 0 when the log restarts). So bytes
//     reach the file in the order SQLite wrote them, and SQLite never reads
//     the file without seeing all it wrote.
//   - right after the page of a commit frame (the frame whose header says
//     the database size, bytes 4..7 of its 24): from that header on, until
//     the connection next uses the wal-index, no write stays in the
//     buffer. So when COMMIT returns, every frame of the transaction has
//     been handed to the kernel, as without the shim: the syncer's fsync,
//     on its own descriptor of the WAL (durable.go), covers them.
//   - before any shm method (xShmMap, xShmLock, xShmBarrier, xShmUnmap) on
//     the database file of the same connection. Other connections learn
//     of a commit only from the wal-index header SQLite writes after the
//     commit's frames (walIndexWriteHdr, around an xShmBarrier), and a
//     writer gives up the WAL write lock with xShmLock: so no connection,
//     of this process or another, can be told of a frame still in a
//     buffer, and no buffer is written after its writer released the lock.
//     With SQLite 3.53.4's walFrames this and the flush at the commit frame
//     each suffice alone; together they do not depend on the order of
//     walFrames' steps.
//
// The link from a database file to its WAL file: SQLite's pager keeps one
// connection's database, journal and WAL names in one allocation, and
// sqlite3_filename_database on the WAL's name returns the pointer the
// pager passed when it opened the database file; the WAL file finds its
// database file among the open ones by that pointer. A WAL file that finds
// none (not opened by a pager of this VFS) is not buffered at all.
//
// A failed flush is returned by the SQLite call that caused it (a COMMIT
// then fails: nothing is acknowledged) and leaves that WAL file failed:
// the buffer held only frames of the transaction in progress, never
// published, and every later call on the file returns the error until it
// is closed. The one shm method that returns no result, xShmBarrier, is
// covered by the syncer: a round that finds a failed flush since the store
// opened (walbufFailures) fails the store as a failed fsync does, so
// nothing committed after it is acknowledged.
//
// Crash: the shim keeps nothing on disk and changes no byte SQLite writes;
// a crash loses what the kernel had not written, as before, and recovery
// reads the WAL as SQLite wrote it.

/*
int fairway_walbuf_register(const char *zName);
int fairway_walbuf_stats(long long *a, int n);
void fairway_walbuf_fail_flushes(int n);
*/
import "C"

import "fmt"

// walbufVFS is the shim's VFS name; every connection's DSN names it (dsn).
const walbufVFS = "fairway-walbuf"

// walbufErr is the registration's failure, if any: Open returns it rather
// than the "no such vfs" every connection would then fail with.
var walbufErr error

// registerWalbuf registers the VFS, once, at package init (mutexes.go's,
// after the memory statistics are off: registering initialises SQLite),
// before any DSN names it (dsn).
func registerWalbuf() error {
	name := C.CString(walbufVFS) // kept: SQLite holds the pointer
	if rc := C.fairway_walbuf_register(name); rc != 0 {
		return fmt.Errorf("sqlite: register the %s VFS: result code %d", walbufVFS, int(rc))
	}
	return nil
}

// walbufStats are the shim's counters, over the whole process.
type walbufStats struct {
	Linked    int64 // WAL files opened and linked to their database file
	Unlinked  int64 // WAL files opened without a link (not buffered)
	WritesIn  int64 // writes SQLite made to linked WAL files
	WritesOut int64 // writes the shim made to them
	Commits   int64 // flushes right after a commit frame
	Direct    int64 // writes that went straight through (not a continuation)
	Failed    int64 // failed flushes
}

func readWalbufStats() walbufStats {
	var a [7]C.longlong
	C.fairway_walbuf_stats(&a[0], C.int(len(a)))
	return walbufStats{int64(a[0]), int64(a[1]), int64(a[2]), int64(a[3]), int64(a[4]), int64(a[5]), int64(a[6])}
}

// walbufFailures is the number of failed flushes so far in the process.
func walbufFailures() int64 { return readWalbufStats().Failed }

// walbufFailFlushes makes the next n flushes fail (tests).
func walbufFailFlushes(n int) { C.fairway_walbuf_fail_flushes(C.int(n)) }
