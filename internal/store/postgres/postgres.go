package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/queued"
	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// Store is the PostgreSQL store. It implements store.Store: the reads and
// the write operations are package sqlstore's, on one writer connection
// (WConn) held for the store's life and a read pool (RDB).
type Store struct {
	*sqlstore.Core
	opts options

	wmu   sync.Mutex        // serializes Write calls and Close
	conn  sync.Mutex        // held while a transaction runs on the writer connection
	apply *queued.Applier   // runs queued Writes
	ready *queued.Readiness // Ready's channel
}

var bg = context.Background()

var (
	_ store.Store    = (*Store)(nil)
	_ store.Queueing = (*Store)(nil)
)

// writerPlanSettings keep the writer connection's statements on their
// keys (doc.go, "The writer's plans"): every one finds its rows by a
// key, and the planner, given the statistics of a table that has grown
// since its last ANALYZE, would cache plans that scan it.
var writerPlanSettings = []string{
	"SET enable_seqscan = off",
	"SET enable_hashjoin = off",
	"SET enable_mergejoin = off",
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
	StateGuard:             "(state || '')", // an expression: a transition finds its row by id, never by a state index
	TagFilter: func(table string) string {
		return "EXISTS (SELECT 1 FROM jsonb_array_elements_text(" + table + ".tags::jsonb) AS t(tag) WHERE t.tag = ?)"
	},
	UniqueViolation:     func(err error) bool { return pgCode(err) == "23505" },
	ForeignKeyViolation: func(err error) bool { return pgCode(err) == "23503" },
	ExpectRows:          "fairway_expect_rows",
	ExpectRowsMissed:    func(err error) bool { return pgCode(err) == "FWCON" },
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
	s := &Store{Core: &sqlstore.Core{D: dialect, Window: o.window}, opts: o}
	if err := s.open(ctx, url); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, url string) error {
	wdb, err := sql.Open("pgx", url)
	if err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	s.WDB = wdb
	if s.WConn, err = wdb.Conn(ctx); err != nil {
		_ = wdb.Close()
		return fmt.Errorf("postgres: connect: %w", unavailable(err))
	}
	for _, q := range s.writerSession() {
		if _, err := s.WConn.ExecContext(ctx, q); err != nil {
			_ = s.CloseWriter()
			return fmt.Errorf("postgres: %s: %w", q, err)
		}
	}
	s.Pipe = &pipeline{conn: s.WConn, fence: s.opts.fence}
	if err := s.Prepare(ctx); err != nil {
		_ = s.CloseWriter()
		return fmt.Errorf("postgres: prepare: %w", err)
	}
	rdb, err := sql.Open("pgx", url)
	if err != nil {
		_ = s.CloseWriter()
		return fmt.Errorf("postgres: open: %w", err)
	}
	rdb.SetMaxOpenConns(s.opts.readConns)
	rdb.SetMaxIdleConns(s.opts.readConns)
	if err := rdb.PingContext(ctx); err != nil {
		_ = rdb.Close()
		_ = s.CloseWriter()
		return fmt.Errorf("postgres: connect: %w", unavailable(err))
	}
	s.RDB = rdb
	s.ready = queued.NewReadiness()
	s.apply = queued.Start(s.applyQueued, s.ready)
	s.ReadBarrier = s.apply.Barrier
	return nil
}

// writerSession is what the writer connection sets for its session: the
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
	if err := errors.Join(s.RDB.Close(), s.CloseWriter()); err != nil {
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
// COMMIT returns.
type directTx struct {
	s *Store
	t *tx
}

// beginDirect takes the writer connection and begins a transaction on it.
func (s *Store) beginDirect() (queued.Direct, error) {
	s.conn.Lock()
	return directTx{s: s, t: s.begin()}, nil
}

func (d directTx) Writer() store.Writer { return d.t.w }

func (d directTx) End(ctx context.Context, fnErr error) (<-chan error, error) {
	err := d.s.end(ctx, d.t, fnErr)
	d.s.conn.Unlock()
	if err != nil {
		return nil, err
	}
	return durable, nil
}

// applyQueued is the applier's transaction (queued.Apply): the batch's
// operations in one transaction, durable once COMMIT returns.
func (s *Store) applyQueued(run func(w store.Writer) error, hasOps bool, ch []chan error) error {
	if hasOps {
		s.conn.Lock()
		err := s.transact(bg, run)
		s.conn.Unlock()
		if err != nil {
			return err
		}
	}
	for _, c := range ch {
		c <- nil
	}
	return nil
}

// Ready is closed while no recorded Write waits for the applier: a caller
// with Writes in flight forms its next batch until then (store.Queueing).
func (s *Store) Ready() <-chan struct{} { return s.ready.Channel() }

// Resume accepts writes again after a queued transaction failed; the
// caller has rebuilt its state from the database (store.Queueing).
func (s *Store) Resume() { s.apply.Resume() }

// tx is a transaction on the writer connection. It begins, and the fence
// runs, with its first operation: a Write that writes nothing (a
// dispatcher tick with nothing to do) costs no round trip.
type tx struct {
	w     *sqlstore.Writer
	begun bool
}

// begin returns a transaction whose statements are queued
// (sqlstore.Pipeline) and sent, with BEGIN, the fence and COMMIT, in one
// round trip at end, unless an operation needs an answer first. The
// caller holds conn.
func (s *Store) begin() *tx {
	t := &tx{w: s.NewWriter()}
	t.w.OnFirstOperation(func() error {
		s.Pipe.Queue("BEGIN", nil, nil)
		t.begun = true
		if f := s.opts.fence; f != nil {
			s.Pipe.Queue(f.SQL, f.Args, nil)
		}
		return nil
	})
	return t
}

// end commits t, or rolls it back if fnErr is set or anything fails on
// the way. The caller holds conn.
func (s *Store) end(ctx context.Context, t *tx, fnErr error) (err error) {
	committed := false
	defer func() {
		t.w.Finish()
		sent := s.Pipe.Pending() == 0
		s.Pipe.Reset()
		if t.begun && !committed && sent {
			if _, rerr := s.WConn.ExecContext(bg, "ROLLBACK"); rerr != nil {
				err = errors.Join(err, fmt.Errorf("postgres: rollback: %w", unavailable(rerr)))
			}
		}
	}()
	if fnErr != nil {
		return fnErr
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("postgres: transaction rolled back: %w", err)
	}
	if _, broken := t.w.Finish(); broken != nil {
		return fmt.Errorf("postgres: transaction rolled back: %w", broken)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !t.begun {
		return nil // nothing was written
	}
	s.Pipe.Queue("COMMIT", nil, nil)
	if err := t.w.Send(bg); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	committed = true
	return nil
}

// transact runs fn in one transaction. The caller holds conn.
func (s *Store) transact(ctx context.Context, fn func(w store.Writer) error) error {
	t := s.begin()
	return s.end(ctx, t, fn(t.w))
}

// unavailable marks an error of the connection itself (the database is
// down or unreachable) as store.ErrUnavailable.
func unavailable(err error) error {
	if err == nil || pgCode(err) != "" {
		return err
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "conn closed") {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}
