package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/queued"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// Store is the PostgreSQL store. It implements store.Store: the reads and
// the write operations are package sqlstore's, on two writer connections
// held for the store's life (each a Core's WConn; the embedded Core's is
// the first) and a read pool (RDB).
type Store struct {
	*sqlstore.Core // the reads, and writer connection 0's statements
	opts           options

	wmu     sync.Mutex                // serializes Write calls and Close
	writers [queued.Slots]*writerConn // the writer connections; a direct Write runs on 0
	apply   *queued.Applier           // runs queued Writes
	ready   *queued.Readiness         // Ready's channel

	broken    chan struct{} // closed once a writer connection has failed (Broken)
	breakOnce sync.Once
	cut       chan struct{} // closed once the lifetime ended and the writer sockets were closed
	stopLife  func() bool   // stops the lifetime's watch (WithLifetime)
}

// Broken is closed once a writer connection has failed as a connection
// (store.ErrUnavailable or store.ErrMaybeApplied: closed, reset, or
// silent past the statement timeout). A writer connection is held for
// the store's life and is not reopened: every later write fails, so the
// owner must close the store and open another (package ha ends the term).
func (s *Store) Broken() <-chan struct{} { return s.broken }

// isBroken reports whether Broken's channel is closed.
func (s *Store) isBroken() bool {
	select {
	case <-s.broken:
		return true
	default:
		return false
	}
}

// errBroken is what a broken store's writers answer without sending
// anything: a second wait for a connection known dead would only hold the
// requests longer. Nothing was sent, so a COMMIT refused so is not
// ambiguous (SafeToRetry).
type errBroken struct{}

func (errBroken) Error() string {
	return "postgres: a writer connection of this store failed earlier: nothing was sent"
}
func (errBroken) SafeToRetry() bool { return true }

// markBroken closes Broken's channel, once.
func (s *Store) markBroken() { s.breakOnce.Do(func() { close(s.broken) }) }

// noteFailure marks the store broken when err is the connection's.
func (s *Store) noteFailure(err error) {
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrMaybeApplied) {
		s.markBroken()
	}
}

// writerConn is one writer connection: its statements (a Core of its
// own, whose WConn it is) and the slot the fence counts its commits
// under.
type writerConn struct {
	core *sqlstore.Core
	slot int
	mu   sync.Mutex // held while a transaction runs on it
	sock net.Conn   // its socket, closed when the store's lifetime ends (cutWriters)
}

var bg = context.Background()

var (
	_ store.Store    = (*Store)(nil)
	_ store.Queueing = (*Store)(nil)
)

// writerPlanSettings keep the writer connection's statements on their
// keys (doc.go, "The writer's plans"): every one finds its rows by a
// key, and the planner, given the statistics of a table that has grown
// since its last ANALYZE, would cache plans that scan it. A plan that
// scans all the same (no index serves: the raise reads the events'
// sequence) costs more than jit_above_cost once scans are priced out, so
// JIT is off: it compiled such a plan at every run (0.66 s of CPU for the
// raise), and no statement of the writer runs long enough to gain by it.
// Plans are generic from the first run: a batch's statement reads its
// rows from arrays (package sqlstore, arrays.go), and the planner, which
// prices a custom plan by the arrays' lengths and the generic one at 10
// rows, would otherwise plan again at every run of a batch of fewer.
var writerPlanSettings = []string{
	"SET enable_seqscan = off",
	"SET enable_hashjoin = off",
	"SET enable_mergejoin = off",
	"SET jit = off",
	"SET plan_cache_mode = force_generic_plan",
}

// dialect is PostgreSQL's: numbered placeholders, a failed statement
// aborts the transaction (so fallible operations run in savepoints), new
// event ids read back with RETURNING.
var dialect = sqlstore.Dialect{
	Name:                   "postgres",
	Numbered:               true,
	StatementErrorAbortsTx: true,
	EventIDsReturned:       true,
	BatchTransitions:       true,
	ArrayBatches:           true,
	TenantUnfinished:       true,
	StateGuard:             "(state || '')", // an expression: a transition finds its row by id, never by a state index
	TagFilter: func(table string) string {
		return "EXISTS (SELECT 1 FROM jsonb_array_elements_text(" + table + ".tags::jsonb) AS t(tag) WHERE t.tag = ?)"
	},
	UniqueViolation:     func(err error) bool { return pgCode(err) == "23505" },
	ForeignKeyViolation: func(err error) bool { return pgCode(err) == "23503" },
	ExpectRows:          "fairway_expect_rows",
	ExpectRowsMissed:    func(err error) bool { return pgCode(err) == "FWCON" },
	EventLastID: "SELECT GREATEST(" + sqlstore.EventIDMaxima +
		", (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_id_seq))",
	// setval is not transactional: it runs only where the store numbers
	// events itself (ids not given; with the events' INSERT, after the
	// transaction before has committed: sqlstore.Pipeline's QueueDraw)
	// and before retention deletes any. It only ever moves the sequence
	// forward, past the last id drawn, and writes nothing when it is there.
	EventRaise: "SELECT setval('events_id_seq', m) FROM (SELECT GREATEST(" + sqlstore.EventIDMaxima +
		") AS m) AS r WHERE m > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_id_seq)",
	EventRaiseTo: "SELECT setval('events_id_seq', m) FROM (SELECT CAST(? AS BIGINT) AS m) AS r " +
		"WHERE m > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM events_id_seq)",
	Unindexed: "%s",
	// Each spec by its key, for every job read (a nested loop): the
	// subquery, which OFFSET 0 keeps from being flattened into a join,
	// leaves no hash join that reads all of job_specs for the unfinished
	// jobs at lead.
	JobFrom: "jobs LEFT JOIN LATERAL (SELECT * FROM job_specs WHERE job_specs.job_id = jobs.id OFFSET 0) AS job_specs ON TRUE",
	// job_specs has no foreign key (migration 0023), so no cascade: the
	// statement that deletes a job deletes its spec, each by its primary
	// key, in one statement (doc.go, "The spec without a foreign key").
	JobDelete: "WITH spec AS (DELETE FROM job_specs WHERE job_id = $1) DELETE FROM jobs WHERE id = $1",
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Fence is a statement that runs first in every write transaction, sent
// with its other statements; its error aborts the transaction, and Err,
// when set, names that error (package leader's fence: nothing commits
// once this instance no longer leads).
type Fence struct {
	SQL  string
	Args []any
	Err  func(error) error // the error Write returns for the fence's, or nil to keep it
}

type options struct {
	readConns int
	window    time.Duration
	fence     *Fence
	idleTx    time.Duration
	stmt      time.Duration
	life      context.Context
	// arrayMinRows overrides sqlstore.MinArrayRows (tests).
	arrayMinRows int
	// noFold sets sqlstore.Dialect.NoFold (tests).
	noFold bool
}

// Option changes a setting of Open.
type Option func(*options)

// WithReadConns sets the size of the read pool (default 8).
func WithReadConns(n int) Option { return func(o *options) { o.readConns = n } }

// WithIdempotencyWindow overrides store.IdempotencyWindow (tests).
func WithIdempotencyWindow(d time.Duration) Option { return func(o *options) { o.window = d } }

// WithFence runs f at the start of every write transaction.
func WithFence(f Fence) Option { return func(o *options) { o.fence = &f } }

// WithIdleTxTimeout has the database end the writer's session when it
// leaves a transaction open without a statement for d
// (idle_in_transaction_session_timeout). A leader cut off from the
// database in the middle of a transaction would otherwise hold the
// leadership row's shared lock, and so hold off the next term, until the
// database noticed the dead connection.
func WithIdleTxTimeout(d time.Duration) Option { return func(o *options) { o.idleTx = d } }

// WithStatementTimeout bounds each round trip on a writer connection
// (a transaction's statements, its COMMIT, a ROLLBACK) to d, measured on
// this side: a database that stops answering without closing the
// connection (a partition) fails the write within d, with
// store.ErrUnavailable, or store.ErrMaybeApplied for a COMMIT, instead of
// holding the writer until the network gives up.
func WithStatementTimeout(d time.Duration) Option { return func(o *options) { o.stmt = d } }

// WithLifetime ends every round trip on a writer connection when ctx
// ends (the leader's term): a transaction waiting for a database that no
// longer answers is given up at once (store.ErrUnavailable, or
// store.ErrMaybeApplied for a COMMIT) rather than at the statement
// timeout, so that the requests it holds are answered and the store can
// be closed; a statement run outside the pipeline, which has no
// deadline, is ended by closing the writer sockets (cutWriters). Writes
// after that fail at once (Broken): the store is for that lifetime only.
func WithLifetime(ctx context.Context) Option { return func(o *options) { o.life = ctx } }

// Open connects to the database at url (postgres://...), applies pending
// migrations and returns the store.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	o := options{readConns: 8, window: store.IdempotencyWindow}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkURL(url); err != nil {
		return nil, err
	}
	if _, err := Migrate(ctx, url); err != nil {
		return nil, err
	}
	d := dialect
	d.ArrayMinRows, d.NoFold = o.arrayMinRows, o.noFold
	s := &Store{Core: &sqlstore.Core{D: d, Window: o.window}, opts: o, broken: make(chan struct{}), cut: make(chan struct{})}
	if err := s.open(ctx, url); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, url string) error {
	for i := range s.writers {
		core := s.Core // writer 0's statements are the embedded Core's
		if i > 0 {
			core = &sqlstore.Core{D: s.D, Window: s.opts.window}
		}
		s.writers[i] = &writerConn{core: core, slot: i}
		if err := s.connectWriter(ctx, url, s.writers[i]); err != nil {
			for _, opened := range s.writers[:i] {
				_ = opened.core.CloseWriter()
			}
			return err
		}
	}
	rdb, err := OpenDB(url)
	if err != nil {
		_ = s.closeWriters()
		return fmt.Errorf("postgres: open: %w", err)
	}
	rdb.SetMaxOpenConns(s.opts.readConns)
	rdb.SetMaxIdleConns(s.opts.readConns)
	if err := rdb.PingContext(ctx); err != nil {
		_ = rdb.Close()
		_ = s.closeWriters()
		return fmt.Errorf("postgres: connect: %w", unavailable(err))
	}
	s.RDB = rdb
	s.ready = queued.NewReadiness()
	s.apply = queued.StartConcurrent(s.stage, s.ready)
	s.ReadBarrier = s.apply.Barrier
	if s.opts.life != nil {
		s.stopLife = context.AfterFunc(s.opts.life, s.cutWriters)
	}
	return nil
}

// cutWriters ends the store's lifetime (WithLifetime): the store is
// Broken, so that no write sends anything more, and both writer sockets
// are closed, so that a round trip in progress fails at once, whatever
// its context: a pipelined batch is also ended by its context (bound),
// but a statement that runs at once on the writer connection (package
// sqlstore runs them with context.Background, so that a cancelled
// request cannot spoil a batch it shares) has no deadline, and on a
// silent network would wait for the database until the network gave up.
// A batch whose COMMIT had gone out is then ErrMaybeApplied; any other is
// ErrUnavailable (nothing was committed).
func (s *Store) cutWriters() {
	s.markBroken()
	close(s.cut)
	for _, wc := range s.writers {
		if wc != nil && wc.sock != nil {
			_ = wc.sock.Close()
		}
	}
}

// wasCut reports whether cutWriters has run.
func (s *Store) wasCut() bool {
	select {
	case <-s.cut:
		return true
	default:
		return false
	}
}

// connectWriter opens c's writer connection (a pool of one, held for the
// store's life), sets its session and prepares its statements.
func (s *Store) connectWriter(ctx context.Context, url string, wc *writerConn) error {
	c := wc.core
	wdb, err := OpenDB(url)
	if err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	c.WDB = wdb
	if c.WConn, err = wdb.Conn(ctx); err != nil {
		_ = wdb.Close()
		return fmt.Errorf("postgres: connect: %w", unavailable(err))
	}
	if wc.sock, err = socketOf(c.WConn); err != nil {
		_ = c.CloseWriter()
		return err
	}
	for _, q := range s.writerSession() {
		if _, err := c.WConn.ExecContext(ctx, q); err != nil {
			_ = c.CloseWriter()
			return fmt.Errorf("postgres: %s: %w", q, err)
		}
	}
	c.Pipe = &pipeline{conn: c.WConn, fence: s.opts.fence, timeout: s.opts.stmt, failed: s.noteFailure, dead: s.isBroken,
		life: s.opts.life}
	if err := c.Prepare(ctx); err != nil {
		_ = c.CloseWriter()
		return fmt.Errorf("postgres: prepare: %w", err)
	}
	return nil
}

// socketOf is conn's network connection to the database.
func socketOf(conn *sql.Conn) (net.Conn, error) {
	var sock net.Conn
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: the writer connection is a %T, not pgx's", dc)
		}
		sock = c.Conn().PgConn().Conn()
		return nil
	})
	return sock, err
}

// closeWriters closes both writer connections: each session is ended
// first (bounded by closeTimeout), which drops its prepared statements in
// the database, so that closing them here costs no round trip, and a
// database that no longer answers does not hold Close.
func (s *Store) closeWriters() error {
	var errs []error
	for _, wc := range s.writers {
		if wc == nil || wc.core == nil {
			continue
		}
		if s.wasCut() {
			// The socket is closed: the database ends the session when
			// it notices (idle_in_transaction_session_timeout, keepalive).
			_ = wc.core.CloseWriter()
			continue
		}
		if err := endSession(wc.core.WConn); err != nil {
			errs = append(errs, err)
		}
		_ = wc.core.CloseWriter() // its statements' and connection's errors say only that the session ended
	}
	return errors.Join(errs...)
}

// closeTimeout bounds the end of a session at Close.
const closeTimeout = 2 * time.Second

// endSession closes conn's PostgreSQL session (Terminate, then the
// socket), waiting at most closeTimeout for the database.
func endSession(conn *sql.Conn) error {
	if conn == nil {
		return nil
	}
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return nil
		}
		ctx, cancel := context.WithTimeout(bg, closeTimeout)
		defer cancel()
		return c.Conn().PgConn().Close(ctx)
	})
	if err != nil && !errors.Is(err, driver.ErrBadConn) && !errors.Is(err, sql.ErrConnDone) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}

// writerSession is what each writer connection sets for its session: the
// plan settings, and the idle-in-transaction timeout when one is set.
func (s *Store) writerSession() []string {
	settings := writerPlanSettings
	if s.opts.idleTx > 0 {
		settings = append(slices.Clip(settings),
			fmt.Sprintf("SET idle_in_transaction_session_timeout = %d", s.opts.idleTx.Milliseconds()))
	}
	return settings
}

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// checkURL refuses what is not a PostgreSQL URL.
func checkURL(url string) error {
	if !IsURL(url) {
		return fmt.Errorf("postgres: %q is not a postgres:// URL", Redact(url))
	}
	if _, err := pgconn.ParseConfig(url); err != nil {
		return fmt.Errorf("postgres: bad URL: %w", err)
	}
	return nil
}

// Close applies what is queued, then closes both pools. Closing twice is
// safe.
func (s *Store) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.Closed.Load() {
		return nil
	}
	s.apply.Close() // what is queued commits first
	s.Closed.Store(true)
	if s.stopLife != nil {
		s.stopLife()
	}
	if err := errors.Join(s.RDB.Close(), s.closeWriters()); err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}

// Write runs fn in one transaction on the writer connection and returns
// once it has committed (synchronous_commit: committed is durable); see
// store.Store.Write.
func (s *Store) Write(ctx context.Context, fn func(w store.Writer) error) error {
	durable, err := s.WriteDeferred(ctx, fn)
	if err != nil {
		return err
	}
	return <-durable
}

// durable is the channel of a direct Write: PostgreSQL's commit is
// durable when it returns.
var durable = func() <-chan error {
	ch := make(chan error)
	close(ch)
	return ch
}()

// WriteDeferred is Write without the wait for the commit; see
// store.Store.WriteDeferred. fn runs on a queued.Recorder: a Write of
// operations that may run later is queued for the applier, which commits
// it on its own goroutine, and returns at once; the first operation that
// must answer turns it into a transaction of its own on the caller's
// goroutine (doc.go, "Queued writes").
func (s *Store) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.Closed.Load() {
		return nil, store.ErrClosed
	}
	return s.apply.Write(ctx, fn, s.beginDirect)
}

// directTx is a Write's own transaction (queued.Direct), durable when
// COMMIT returns. It runs on writer 0, once the applier is idle.
type directTx struct {
	wc *writerConn
	t  *tx
}

// beginDirect takes writer 0 and begins a transaction on it.
func (s *Store) beginDirect() (queued.Direct, error) {
	wc := s.writers[0]
	wc.mu.Lock()
	return directTx{wc: wc, t: s.begin(wc)}, nil
}

func (d directTx) Writer() store.Writer { return d.t.w }

func (d directTx) End(ctx context.Context, fnErr error) (<-chan error, error) {
	err := d.t.end(ctx, fnErr)
	d.wc.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return durable, nil
}

// stage is the applier's part (queued.Stage): it runs a batch's
// operations in a transaction on writer slot, holding its events back
// for the commit, and leaves it open for the applier to commit; the
// other writer meanwhile runs the next batch (doc.go, "Concurrent
// transactions"). With commitNow it commits in the same round trip.
func (s *Store) stage(slot int, run func(w store.Writer) error, hasOps, commitNow bool) (queued.Staged, error) {
	if !hasOps {
		return nothingStaged{}, nil
	}
	wc := s.writers[slot]
	wc.mu.Lock()
	t := s.begin(wc)
	if commitNow {
		defer wc.mu.Unlock()
		if err := t.end(bg, run(t.w)); err != nil {
			return nil, err
		}
		return nothingStaged{}, nil
	}
	t.pipe().holdEvents = true // until the commit or the rollback resets the pipeline
	if err := t.sendOps(run(t.w)); err != nil {
		wc.mu.Unlock()
		return nil, err
	}
	return stagedTx{wc: wc, t: t}, nil
}

// stagedTx is a transaction whose statements have run (queued.Staged).
type stagedTx struct {
	wc *writerConn
	t  *tx
}

func (st stagedTx) Commit() error {
	defer st.wc.mu.Unlock()
	return st.t.commit()
}

func (st stagedTx) Rollback() {
	defer st.wc.mu.Unlock()
	_ = st.t.rollback() // the batch fails with its predecessor's error
}

// nothingStaged is the transaction of a batch without operations.
type nothingStaged struct{}

func (nothingStaged) Commit() error { return nil }
func (nothingStaged) Rollback()     {}

// Ready is closed while no recorded Write waits for the applier: a caller
// with Writes in flight forms its next batch until then (store.Queueing).
func (s *Store) Ready() <-chan struct{} { return s.ready.Channel() }

// Resume accepts writes again after a queued transaction failed; the
// caller has rebuilt its state from the database (store.Queueing).
func (s *Store) Resume() { s.apply.Resume() }

// tx is a transaction on a writer connection. It begins, and the fence
// runs, with its first operation: a Write that writes nothing (a
// dispatcher tick with nothing to do) costs no round trip.
type tx struct {
	wc    *writerConn
	w     *sqlstore.Writer
	begun bool
}

// begin returns a transaction on wc whose statements are queued
// (sqlstore.Pipeline) and sent, with BEGIN, the fence and COMMIT, in one
// round trip at end, unless an operation needs an answer first. The
// caller holds wc.mu.
func (s *Store) begin(wc *writerConn) *tx {
	t := &tx{wc: wc, w: wc.core.NewWriter()}
	t.w.OnFirstOperation(func() error {
		wc.core.Pipe.Queue("BEGIN", nil, nil)
		t.begun = true
		if f := s.opts.fence; f != nil {
			wc.core.Pipe.Queue(f.SQL, append(slices.Clip(f.Args), wc.slot), nil)
		}
		return nil
	})
	return t
}

// end commits t, or rolls it back if fnErr is set or anything fails on
// the way: what is queued is sent with COMMIT, in one round trip.
func (t *tx) end(ctx context.Context, fnErr error) error {
	if err := t.finish(ctx, fnErr); err != nil || !t.begun {
		return err
	}
	t.pipe().Queue("COMMIT", nil, nil)
	return t.send("commit")
}

// sendOps sends what is queued, BEGIN first, and returns with every
// statement run and the transaction open for commit; fnErr or a failure
// rolls it back and is returned.
func (t *tx) sendOps(fnErr error) error {
	if err := t.finish(bg, fnErr); err != nil || !t.begun {
		return err
	}
	return t.send("transaction rolled back")
}

// commit commits t once sendOps has run its statements: the events held
// back, then COMMIT, in one round trip.
func (t *tx) commit() error {
	p := t.pipe()
	if !t.begun {
		p.Reset() // nothing was written; ends holdEvents
		return nil
	}
	p.releaseHeld()
	p.Queue("COMMIT", nil, nil)
	return t.send("commit")
}

// send sends what is queued on t's connection; if that fails, t is rolled
// back and the error says what failed. A COMMIT whose connection broke
// after it may have gone out is store.ErrMaybeApplied (ambiguous).
func (t *tx) send(what string) error {
	if err := t.w.Send(bg); err != nil {
		if what == "commit" {
			err = ambiguous(err)
		}
		return errors.Join(fmt.Errorf("postgres: %s: %w", what, err), t.abandon())
	}
	return nil
}

// ambiguous marks a connection failure of a batch that carried COMMIT as
// store.ErrMaybeApplied, unless pgx knows nothing was sent: the database
// may have committed before the connection failed, or its answer may
// have been lost on the way back.
func ambiguous(err error) error {
	if !errors.Is(err, store.ErrUnavailable) || pgconn.SafeToRetry(err) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrMaybeApplied, err)
}

// pipe is t's connection's pipeline.
func (t *tx) pipe() *pipeline { return t.wc.core.Pipe.(*pipeline) }

// finish ends the function's part of t: fnErr, an operation that broke
// the transaction or ctx's end rolls it back and is returned.
func (t *tx) finish(ctx context.Context, fnErr error) error {
	err := fnErr
	if err == nil {
		if ferr := t.w.Flush(); ferr != nil {
			err = fmt.Errorf("postgres: transaction rolled back: %w", ferr)
		} else if _, broken := t.w.Finish(); broken != nil {
			err = fmt.Errorf("postgres: transaction rolled back: %w", broken)
		} else {
			err = ctx.Err()
		}
	}
	t.w.Finish()
	if err != nil {
		return errors.Join(t.connectionLost(err), t.rollback())
	}
	return nil
}

// connectionLost names err store.ErrUnavailable, and marks the store
// Broken, when it is the writer connection's failure under a statement
// that ran at once (not pipelined: pipeline.Send names its own): the
// socket closed at the end of the lifetime, or reset. The transaction's
// COMMIT was not sent, so nothing of it was committed. A context's end
// is left as it is: it says the caller gave up, not that the connection
// failed.
func (t *tx) connectionLost(err error) error {
	if errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		pgCode(err) != "" || !connectionFailed(err) {
		return err
	}
	err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	if p := t.pipe(); p.failed != nil {
		p.failed(err)
	}
	return err
}

// rollback drops what is queued and, if statements were sent, rolls the
// transaction back.
func (t *tx) rollback() error {
	p := t.pipe()
	sent := p.Pending() == 0
	p.Reset()
	if t.begun && sent {
		return t.abandon()
	}
	return nil
}

// abandon rolls back a transaction whose statements were sent (after a
// failed statement the database has aborted it, and ROLLBACK ends it),
// dropping whatever its pipeline still holds.
func (t *tx) abandon() error {
	p := t.pipe()
	p.Reset()
	if p.dead != nil && p.dead() {
		return nil // the store is discarded; the database ends the session's transaction
	}
	ctx, cancel := p.bound(bg)
	defer cancel()
	if _, err := t.wc.core.WConn.ExecContext(ctx, "ROLLBACK"); err != nil {
		err = unavailable(err)
		if p.failed != nil {
			p.failed(err)
		}
		return fmt.Errorf("postgres: rollback: %w", err)
	}
	return nil
}

// unavailable marks an error of the connection itself (the database is
// down or unreachable) as store.ErrUnavailable.
func unavailable(err error) error {
	if err == nil {
		return err
	}
	if code := pgCode(err); code != "" {
		if ConnectionState(code) {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, store.ErrUnavailable) {
		return err
	}
	if connectionFailed(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// ConnectionState reports whether a SQLSTATE says the database cannot
// serve this connection now, rather than refusing the statement: class 08
// (connection exception), 53300 (too many connections) and 57P01-57P03
// (the server shutting down, crashed, or starting).
func ConnectionState(code string) bool {
	switch code {
	case "53300", "57P01", "57P02", "57P03":
		return true
	}
	return strings.HasPrefix(code, "08")
}

// connectionFailed reports whether err is a failure of the connection
// itself rather than the database's answer: a failed dial, a connection
// closed or reset under a statement (io.ErrUnexpectedEOF, EOF, a network
// error or timeout), a round trip given up (its context ended: pgx then
// closes the connection), or one database/sql already knows is broken.
func connectionFailed(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "conn closed")
}
