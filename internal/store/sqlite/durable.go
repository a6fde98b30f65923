package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Commits and the disk.
//
// The writer connection runs with synchronous=NORMAL: COMMIT appends the
// transaction's frames to the WAL and returns without an fsync. The syncer
// goroutine then fsyncs the WAL file once for every commit made since its
// last round, and reports each of those commits durable when that fsync
// returns. Write waits for the report, so what it acknowledges is on disk,
// exactly as with synchronous=FULL; WriteDeferred hands the report back as
// a channel, so that the caller can run its next transaction while the
// disk works (group commit with the fsync off the writer's path).
//
// Why this is as safe as synchronous=FULL: in WAL mode FULL only adds an
// fsync of the WAL file at the end of each COMMIT, which is what the syncer
// does, shared by several commits. SQLite still fsyncs the WAL before every
// checkpoint copies frames into the database file, so no frame reaches the
// database file before it is durable in the WAL, and a crash before the
// syncer's fsync loses only commits nobody was told about: recovery drops
// the WAL frames whose checksums or salts do not match.
//
// On Linux the syncer's "fsync" is fdatasync(2) (syncdata_linux.go): it
// writes the file's data and the metadata needed to read it back, the
// size when a commit grew the WAL, and skips the timestamps, which no
// recovery reads. What a crash can lose is unchanged: frames whose commit
// nobody was told of. The directory entry of a new WAL file is still made
// durable with an fsync of the directory (syncWAL).
//
// The syncer fsyncs its own descriptor of the WAL, so it covers what the
// writer had handed to the kernel when COMMIT returned. The writer's WAL
// writes go through the fairway-walbuf VFS (walbuf.go), which gathers a
// commit's frames into one write: it writes them out at the latest right
// after the commit frame's page, inside COMMIT, and before the wal-index
// tells anyone of the commit; a failed write fails that COMMIT. The one
// failure the shim cannot return to SQLite (in xShmBarrier, which returns
// nothing; with SQLite 3.53.4 it never has anything to write there) fails
// the syncer's next round: a round that finds a failed shim write since the
// syncer started reports errWalbufFlush, sticky as a failed fsync.

// syncer fsyncs the WAL behind the writer. Its methods are safe for
// concurrent use.
type syncer struct {
	walPath string

	mu        sync.Mutex
	committed uint64       // commits made so far (writer order)
	durable   uint64       // commits known to be on disk
	waiters   []syncWaiter // ascending seq
	err       error        // sticky: after a failed fsync nothing is known durable
	wal       *os.File     // opened at the first round; reopened if SQLite replaced the file
	fsync     func() error // syncWAL; tests replace it
	flushFail int64        // the WAL shim's failed flushes when the syncer started
	busy      func(bool)   // told when an fsync begins and ends (nil: nobody)

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

type syncWaiter struct {
	seq uint64
	ch  chan error
}

// errSyncFailed wraps a failed fsync: the store refuses every later write,
// since what the disk holds is no longer known.
var errSyncFailed = errors.New("sqlite: fsync of the WAL failed; the store refuses writes until it is reopened")

// errWalbufFlush: a buffered WAL write failed since the store opened
// (process-wide: the shim's counter is one for all stores).
var errWalbufFlush = errors.New("a write of the WAL failed")

func startSyncer(dbPath string) *syncer {
	y := &syncer{walPath: dbPath + "-wal", flushFail: walbufFailures(), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	y.fsync = y.syncWAL
	go y.run()
	return y
}

// committed registers a commit the writer just made and returns the
// channel that receives nil once it is durable (or the fsync error). A
// transaction that wrote nothing is durable as soon as every earlier
// commit is: its answer may depend on them.
func (y *syncer) commit(wrote bool) <-chan error {
	ch := make(chan error, 1)
	y.commitTo(wrote, ch)
	return ch
}

// commitTo is commit that reports on ch (buffered, one slot).
func (y *syncer) commitTo(wrote bool, ch chan error) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.err != nil {
		ch <- y.err
		return
	}
	if wrote {
		y.committed++
	}
	if y.committed <= y.durable {
		ch <- nil
		return
	}
	y.waiters = append(y.waiters, syncWaiter{seq: y.committed, ch: ch})
	select {
	case y.wake <- struct{}{}:
	default:
	}
}

// failed returns the sticky fsync error, if any.
func (y *syncer) failed() error {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.err
}

func (y *syncer) run() {
	defer close(y.done)
	for {
		select {
		case <-y.stop:
			y.round()
			return
		case <-y.wake:
			y.round()
		}
	}
}

// round makes every commit registered so far durable with one fsync.
func (y *syncer) round() {
	y.mu.Lock()
	target := y.committed
	if target == y.durable || y.err != nil {
		y.mu.Unlock()
		return
	}
	busy := y.busy
	y.mu.Unlock()
	if busy != nil {
		busy(true)
		defer busy(false)
	}
	err := y.fsync()
	if err == nil && walbufFailures() != y.flushFail {
		// A write of the WAL shim failed (walbuf.go): what SQLite
		// believes it wrote may not be in the file.
		err = errWalbufFlush
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	if err != nil {
		y.err = fmt.Errorf("%w: %w", errSyncFailed, err)
		for _, w := range y.waiters {
			w.ch <- y.err
		}
		y.waiters = nil
		return
	}
	y.durable = target
	n := 0
	for n < len(y.waiters) && y.waiters[n].seq <= target {
		y.waiters[n].ch <- nil
		n++
	}
	y.waiters = append(y.waiters[:0], y.waiters[n:]...)
}

// syncWAL fsyncs the WAL file. The file is opened once and reopened only if
// the path no longer names it (SQLite deletes the WAL when the last
// connection closes, which the store's own connections prevent while it is
// open); a new file's directory entry is made durable too.
func (y *syncer) syncWAL() error {
	if y.wal != nil {
		cur, err := os.Stat(y.walPath)
		if held, herr := y.wal.Stat(); err != nil || herr != nil || !os.SameFile(cur, held) {
			_ = y.wal.Close()
			y.wal = nil
		}
	}
	if y.wal == nil {
		f, err := os.Open(y.walPath)
		if errors.Is(err, fs.ErrNotExist) {
			// No WAL yet (a store just opened that has written nothing):
			// nothing is committed that is not already in the database
			// file, which SQLite syncs itself.
			return nil
		}
		if err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(y.walPath)); err != nil {
			_ = f.Close()
			return err
		}
		y.wal = f
	}
	return syncData(y.wal)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// close makes what was committed durable, answers every waiter and stops.
func (y *syncer) close() error {
	close(y.stop)
	<-y.done
	y.mu.Lock()
	defer y.mu.Unlock()
	var err error
	if y.wal != nil {
		err = y.wal.Close()
	}
	return errors.Join(y.err, err)
}
