package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/queued"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// Store is the SQLite store. It implements store.Store: the reads and the
// write operations are package sqlstore's, on a writer connection (WConn)
// and a read-only pool (RDB) this package opens.
type Store struct {
	*sqlstore.Core
	path string

	wmu   sync.Mutex        // serializes Write calls and Close
	conn  sync.Mutex        // held while a transaction runs on the writer connection
	ckpt  *checkpointer     // nil when checkpoints are left to SQLite
	sync  *syncer           // makes commits durable behind the writer
	apply *queued.Applier   // runs queued Writes (queue.go)
	ready *queued.Readiness // Ready's channel
}

// dialect is SQLite's: ? placeholders, a failed statement leaves the
// transaction usable, event ids from LastInsertId.
var dialect = sqlstore.Dialect{
	Name:       "sqlite",
	StateGuard: "+state", // unary +: a transition finds its row by id, never by a state index
	// Multi-row job inserts: one statement of 256 rows costs less than 256
	// (BenchmarkInsertBatched).
	BatchInserts: true,
	// The writer's hot statements skip database/sql's per-call work
	// (sqlstore, rawexec.go).
	RawExec: true,
	// ... and bind their arguments and step in one cgo call (boundexec.go).
	BoundExec: newBoundExec,
	TagFilter: func(table string) string {
		return "EXISTS (SELECT 1 FROM json_each(" + table + ".tags) WHERE json_each.value = ?)"
	},
	UniqueViolation:     isUniqueViolation,
	ForeignKeyViolation: isForeignKeyViolation,
	EventLastID:         "SELECT max(" + sqlstore.EventIDMaxima + ", COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))",
	Unindexed:           "+%s",
	EventRaise:          "UPDATE sqlite_sequence SET seq = max(seq, " + sqlstore.EventIDMaxima + ") WHERE name = 'events'",
	EventRaiseTo:        "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'",
}

// bg is the context statements run with (see sqlstore).
var bg = context.Background()

var (
	_ store.Store         = (*Store)(nil)
	_ store.ClaimsInPlace = (*Store)(nil)
	_ store.SyncGathering = (*Store)(nil)
)

// options are Open's settings.
type options struct {
	readConns   int
	busyTimeout time.Duration
	window      time.Duration
	cacheKiB    int // each reader's
	writerKiB   int // the writer's

	checkpointEvery time.Duration
	walPrealloc     int64 // bytes of zeros a new WAL file starts with (walprealloc.go)
	// noFold sets sqlstore.Dialect.NoFold (tests).
	noFold bool
}

// Option changes a setting of Open.
type Option func(*options)

// WithReadConns sets the size of the read pool (default: max(4, GOMAXPROCS)).
func WithReadConns(n int) Option { return func(o *options) { o.readConns = n } }

// WithBusyTimeout sets how long a connection waits for a lock held by
// another process before failing with SQLITE_BUSY (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithIdempotencyWindow overrides store.IdempotencyWindow (tests).
func WithIdempotencyWindow(d time.Duration) Option { return func(o *options) { o.window = d } }

// WithCheckpointInterval sets how often, at most, the background
// checkpointer runs while writes happen (default 100ms). 0 turns it off and
// leaves checkpoints to SQLite, which then runs them inside the commit that
// crosses 1000 WAL pages.
func WithCheckpointInterval(d time.Duration) Option {
	return func(o *options) { o.checkpointEvery = d }
}

// WithWALPreallocation sets how many bytes of zeros a new WAL file is
// created with (walprealloc.go; default walPreallocBytes, about 64 MiB);
// 0 leaves the file to SQLite, which creates it empty.
func WithWALPreallocation(bytes int64) Option { return func(o *options) { o.walPrealloc = bytes } }

// WithCacheSize sets each reader connection's page cache in KiB (default
// 32 MiB).
func WithCacheSize(kib int) Option { return func(o *options) { o.cacheKiB = kib } }

// WithWriterCacheSize sets the writer connection's page cache in KiB
// (default writerCacheKiB).
func WithWriterCacheSize(kib int) Option { return func(o *options) { o.writerKiB = kib } }

// writerCacheKiB is the writer's page cache: small, because SQLite's
// commit scans all of it whenever the transaction split a B-tree page
// (doc.go, "The writer's page cache"), and enough for what the writer
// touches (the paths to the pages its rows go to).
const writerCacheKiB = 4 << 10

// Open opens (creating it and its parent directory if needed) the database
// at path, applies pending migrations and prepares the writer's statements.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := options{
		readConns:   max(4, runtime.GOMAXPROCS(0)),
		busyTimeout: 10 * time.Second,
		window:      store.IdempotencyWindow,
		cacheKiB:    32 << 10,
		writerKiB:   writerCacheKiB,

		checkpointEvery: 100 * time.Millisecond,
		walPrealloc:     walPreallocBytes,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if walbufErr != nil {
		return nil, walbufErr
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	d := dialect
	d.NoFold = o.noFold
	s := &Store{Core: &sqlstore.Core{D: d, Window: o.window}, path: abs}
	if err := s.openWriter(ctx, o); err != nil {
		return nil, err
	}
	// Whatever opening wrote (a new file, migrations) is made durable
	// before the store is handed out.
	s.sync = startSyncer(abs)
	if err := <-s.sync.commit(true); err != nil {
		_ = s.sync.close()
		_ = s.CloseWriter()
		return nil, fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if err := s.openReaders(ctx, o); err != nil {
		_ = s.sync.close()
		_ = s.CloseWriter()
		return nil, err
	}
	s.ready = queued.NewReadiness()
	s.sync.mu.Lock()
	s.sync.busy = s.ready.SetSyncing
	s.sync.mu.Unlock()
	s.apply = queued.Start(s.applyQueued, s.ready)
	s.ReadBarrier = s.apply.Barrier
	if o.checkpointEvery > 0 {
		if err := s.startCheckpointer(ctx, o); err != nil {
			s.apply.Close()
			_ = s.RDB.Close()
			_ = s.sync.close()
			_ = s.CloseWriter()
			return nil, fmt.Errorf("sqlite: open %s: checkpointer: %w", s.path, err)
		}
	}
	return s, nil
}

// pageSize is the page size of a database file this store creates:
// SQLite's default, 4 KiB. A commit's fsync covers every page it changed
// (a steady commit touches about 11 B-trees, a page each), so smaller
// pages mean fewer bytes to sync: on 2026-11-27's machine 4 KiB pages
// gave 1.15x embedded and 1.10x server steady jobs/s, 0.86x the server's
// latency p99 and 0.85x its high-wait p99 against 8 KiB, with the drain
// unchanged (docs/benchmarks.md). 8 KiB had won on the machine of
// 2026-11-25, where a system call was dear and every WAL frame cost two
// (17-56% more drained jobs/s; since the WAL shim, walbuf.go, a commit's
// frames take one write). A file that exists keeps its page size.
const pageSize = 4096

// createWithPageSize gives a database file that has no pages yet the
// page size pageSize: the page size is fixed when the first page is
// written, which switching to WAL does, so it is set before. On a file
// that has pages both statements change nothing (the page size pragma is
// ignored, the file is already in WAL mode or is switched as openWriter
// would).
func createWithPageSize(ctx context.Context, path string, o options) error {
	db, err := sql.Open("sqlite3", dsn(path, o, url.Values{}))
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range []string{"PRAGMA page_size = " + strconv.Itoa(pageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func (s *Store) openWriter(ctx context.Context, o options) error {
	if err := createWithPageSize(ctx, s.path, o); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if o.walPrealloc > 0 {
		// Best effort (walprealloc.go): on failure SQLite creates the
		// WAL itself, as it would without.
		_, _ = preallocateWAL(s.path, o.walPrealloc)
	}
	wo := o
	wo.cacheKiB = o.writerKiB
	db, err := sql.Open("sqlite3", dsn(s.path, wo, url.Values{
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"}, // the syncer fsyncs the WAL; see durable.go
		"_foreign_keys": {"on"},
	}))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	// One connection, never recycled, held as a *sql.Conn: statements are
	// prepared on it once (also mid-transaction, for new JobTransition
	// shapes) and Write drives BEGIN IMMEDIATE / COMMIT on it itself.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s.WDB = db
	if err := s.checkWAL(ctx); err != nil {
		_ = db.Close()
		return err
	}
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return fmt.Errorf("sqlite: migrate %s: %w", s.path, err)
	}
	if s.WConn, err = db.Conn(ctx); err != nil {
		_ = db.Close()
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	autockpt := 1000 // SQLite's default
	if o.checkpointEvery > 0 {
		autockpt = backstopPages
	}
	writerPragmas := []string{
		"PRAGMA wal_autocheckpoint = " + strconv.Itoa(autockpt),
		// Statement journals (and savepoints') in memory: with the
		// default they spill past 64 KiB into a temporary file, opened,
		// unlinked, written and closed inside the writer's transaction
		// (doc.go).
		"PRAGMA temp_store = MEMORY",
	}
	for _, q := range writerPragmas {
		if _, err := s.WConn.ExecContext(ctx, q); err != nil {
			_ = s.CloseWriter()
			return fmt.Errorf("sqlite: open %s: %w", s.path, err)
		}
	}
	if err := s.Prepare(ctx); err != nil {
		_ = s.CloseWriter()
		return fmt.Errorf("sqlite: prepare: %w", err)
	}
	return nil
}

func (s *Store) checkWAL(ctx context.Context) error {
	var mode string
	if err := s.WDB.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("sqlite: open %s: journal_mode is %q, want wal", s.path, mode)
	}
	return nil
}

func (s *Store) openReaders(ctx context.Context, o options) error {
	db, err := sql.Open("sqlite3", dsn(s.path, o, url.Values{
		"_query_only":      {"true"},
		"_stmt_cache_size": {"64"},
	}))
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	db.SetMaxOpenConns(o.readConns)
	db.SetMaxIdleConns(o.readConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return fmt.Errorf("sqlite: open %s: %w", s.path, err)
	}
	s.RDB = db
	return nil
}

// dsn is the URI filename SQLite opens for the database at path (absolute
// or relative to the working directory), with the options and q as query.
func dsn(path string, o options, q url.Values) string {
	q.Set("_busy_timeout", strconv.FormatInt(o.busyTimeout.Milliseconds(), 10))
	q.Set("_cache_size", strconv.Itoa(-o.cacheKiB))
	q.Set("_mutex", "no") // multi-thread mode: mutexes.go
	// One write per WAL commit (walbuf.go; registered at init).
	q.Set("vfs", walbufVFS)
	// A relative path would render as "file://dir/name", whose "dir" SQLite
	// reads as a URI authority (and refuses), so the path is made absolute.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	// url.URL renders "file:///abs"; SQLite wants "file:/abs" or that form,
	// both are valid URI filenames.
	return u.String()
}

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close waits for a running Write, then closes both pools. Closing twice is
// safe.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.Closed.Load() {
		return nil
	}
	s.apply.Close() // what is queued commits first
	s.Closed.Store(true)
	var errs []error
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	errs = append(errs, s.RDB.Close())
	_, err := s.WConn.ExecContext(bg, "PRAGMA optimize")
	errs = append(errs, err, s.sync.close(), s.CloseWriter())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", s.path, err)
	}
	return nil
}

// Write runs fn in one transaction on the writer connection (BEGIN
// IMMEDIATE, so the write lock is taken up front), commits it and returns
// once the commit is durable (the syncer has fsync'd the WAL past it); see
// store.Store.Write.
func (s *Store) Write(ctx context.Context, fn func(w store.Writer) error) error {
	durable, err := s.WriteDeferred(ctx, fn)
	if err != nil {
		return err
	}
	return <-durable
}

// WriteDeferred is Write without the wait for the disk; see
// store.Store.WriteDeferred. fn runs on a recorder: a Write of operations
// that may run later is queued for the applier and returns at once; the
// first operation that must answer turns it into a transaction of its own
// on the caller's goroutine (doc.go, queue.go).
func (s *Store) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.Closed.Load() {
		return nil, store.ErrClosed
	}
	if err := s.sync.failed(); err != nil {
		return nil, err
	}
	return s.apply.Write(ctx, fn, s.beginDirect)
}

// directTx is a Write's own transaction (queued.Direct): committed on the
// caller's goroutine, durable once the syncer's next fsync returns.
type directTx struct {
	s *Store
	w *sqlstore.Writer
}

// beginDirect takes the writer connection and begins a transaction on it.
func (s *Store) beginDirect() (queued.Direct, error) {
	s.conn.Lock()
	w, err := s.begin()
	if err != nil {
		s.conn.Unlock()
		return nil, err
	}
	return directTx{s: s, w: w}, nil
}

func (d directTx) Writer() store.Writer { return d.w }

func (d directTx) End(ctx context.Context, fnErr error) (<-chan error, error) {
	s := d.s
	wrote, err := s.end(ctx, d.w, fnErr)
	s.conn.Unlock()
	if err != nil {
		return nil, err
	}
	if s.ckpt != nil {
		s.ckpt.notify()
	}
	return s.sync.commit(wrote), nil
}

// transact runs fn between BEGIN IMMEDIATE and COMMIT, rolling back on any
// error. The caller holds conn.
func (s *Store) transact(ctx context.Context, fn func(w store.Writer) error) (wrote bool, err error) {
	w, err := s.begin()
	if err != nil {
		return false, err
	}
	return s.end(ctx, w, fn(w))
}

// begin starts a transaction on the writer connection (the write lock up
// front) and returns its Writer.
func (s *Store) begin() (*sqlstore.Writer, error) {
	if _, err := s.WConn.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return s.NewWriter(), nil
}

// end commits w's transaction, or rolls it back if fnErr is set or
// anything fails on the way.
func (s *Store) end(ctx context.Context, w *sqlstore.Writer, fnErr error) (wrote bool, err error) {
	committed := false
	defer func() {
		w.Finish()
		if !committed {
			if _, rerr := s.WConn.ExecContext(bg, "ROLLBACK"); rerr != nil && !s.autocommit() {
				err = errors.Join(err, fmt.Errorf("sqlite: rollback: %w", rerr))
			}
		}
	}()
	if fnErr != nil {
		return false, fnErr
	}
	if err := w.Flush(); err != nil {
		return false, fmt.Errorf("sqlite: transaction rolled back: %w", err)
	}
	wrote, broken := w.Finish()
	if broken != nil {
		return false, fmt.Errorf("sqlite: transaction rolled back: %w", broken)
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if s.autocommit() {
		return false, errors.New("sqlite: transaction was rolled back by SQLite")
	}
	if _, err := s.WConn.ExecContext(bg, "COMMIT"); err != nil {
		return false, fmt.Errorf("sqlite: commit: %w", err)
	}
	committed = true
	return wrote, nil
}

// ClaimsInPlace reports that a keyed JobInsertBatched claims its key with
// a statement on the writer connection (store.ClaimsInPlace): no round
// trip, so an idle caller may let the claim answer a duplicate.
func (s *Store) ClaimsInPlace() bool { return true }

// Ready is closed while no recorded Write waits for the applier and no
// fsync runs: a caller with Writes in flight forms its next batch until
// then (store.Queueing; queued.Readiness says why).
func (s *Store) Ready() <-chan struct{} { return s.ready.Channel() }

// ReadyUnlessSyncing implements store.SyncGathering.
func (s *Store) ReadyUnlessSyncing() <-chan struct{} { return s.ready.ChannelUnlessSyncing() }

// Resume accepts writes again after a queued transaction failed; the
// caller has rebuilt its state from the store (store.Queueing). A failed
// fsync stays: the store still refuses writes after it.
func (s *Store) Resume() { s.apply.Resume() }

// autocommit reports whether the writer connection is outside a
// transaction (SQLite rolls back on its own after some errors).
func (s *Store) autocommit() bool {
	auto := false
	_ = s.WConn.Raw(func(dc any) error {
		if c, ok := dc.(*sqlite3.SQLiteConn); ok {
			auto = c.AutoCommit()
		}
		return nil
	})
	return auto
}
