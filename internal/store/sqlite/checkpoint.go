package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"time"
)

// checkpointer copies committed WAL frames into the database file from its
// own connection, so that a commit pays for one WAL fsync and never for a
// checkpoint. Write kicks it after each commit; it runs at most once per
// interval, PASSIVE (it never waits for, nor blocks, readers and the
// writer). The writer connection keeps SQLite's automatic checkpoint as a
// backstop at backstopPages.
type checkpointer struct {
	db       *sql.DB
	interval time.Duration
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

// backstopPages is the writer's wal_autocheckpoint when the background
// checkpointer runs: reached only if it falls far behind.
//
// Under continuous writes (bench steady) it is reached: a PASSIVE round
// never catches up with the commit after it, and SQLite restarts the WAL
// (writes it from its start again) only when a write transaction begins
// with every frame copied, so the WAL grows to the backstop (134 MB at 8
// KiB pages) and restarts there, the backstop's checkpoint running inside
// a commit. Under a light load (bench latency) rounds catch up and the WAL
// restarts several times a second. Restarting it early was tried and not
// kept (2026-11-27, branch h-sqlwal-walrestart): from 1024 frames a round
// ended with a second PASSIVE checkpoint holding the writer lock, which
// kept the WAL file at 16-25 MB, but that round held the writer about
// 1.1 ms (p50; p90 1.7-2.7 ms: its WAL and database fsyncs) once every
// 100 ms, and the WAL fsyncs it was meant to cheapen cost the same: only
// the first pass through the file after Open appends, later ones overwrite
// blocks the file has (syncer fsync p50 211-269 µs before, 218-291
// after). Paired runs: server steady 0.96x, embedded steady 0.97x (quiet
// machine, 3 pairs each), latency p99 within the noise.
const backstopPages = 16384

func (s *Store) startCheckpointer(ctx context.Context, o options) error {
	db, err := sql.Open("sqlite3", dsn(s.path, o, url.Values{}))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return err
	}
	c := &checkpointer{db: db, interval: o.checkpointEvery,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.ckpt = c
	go c.run()
	return nil
}

// notify tells the checkpointer that a transaction committed.
func (c *checkpointer) notify() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// Errors are left for the next round and, ultimately, the
		// backstop: a failed checkpoint loses nothing.
		_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		t.Reset(c.interval)
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
	}
}

func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}
