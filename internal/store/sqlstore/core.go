package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Dialect is what differs between the SQL databases the drivers use.
type Dialect struct {
	Name string // error prefix: "sqlite", "postgres"
	// Numbered placeholders ($1, $2, ...) instead of ?.
	Numbered bool
	// StatementErrorAbortsTx: a failed statement spoils the transaction
	// (PostgreSQL), so every operation that may fail on a constraint runs
	// in a savepoint.
	StatementErrorAbortsTx bool
	// BatchTransitions: JobTransitionBatched holds transitions and applies
	// them set-wise (batched.go), saving a round trip per job.
	BatchTransitions bool
	// BatchInserts: JobInsertBatched holds the jobs it is given and
	// inserts them with multi-row statements before the transaction's next
	// operation (implied by BatchTransitions).
	BatchInserts bool
	// RawExec: the writer's prepared transition and batch statements run
	// on the driver's statement, not through database/sql (rawexec.go).
	RawExec bool
	// BoundExec, if set, returns a function that runs a RawExec statement
	// raw, prepared from q, with all its arguments in one call into the
	// driver, or nil when it does not recognise raw (rawexec.go).
	BoundExec func(raw driver.Stmt, q string) func(args []any) (int64, error)
	// ArrayBatches: the pipelined batches (inserts, transitions,
	// executions, events) pass each column as one array parameter and read
	// their rows with unnest, instead of a multi-row VALUES list of
	// rows × columns parameters (arrays.go; PostgreSQL).
	ArrayBatches bool
	// ArrayMinRows, if not 0, is the fewest rows a batch passes as
	// arrays, instead of MinArrayRows (tests: 1, every batch).
	ArrayMinRows int
	// NoFold: a transition of a job whose insert is held is never
	// applied to the held row (fold.go), but flushed and UPDATEd (tests
	// compare the two).
	NoFold bool
	// EventIDsReturned: multi-row event inserts read the new ids with
	// RETURNING instead of LastInsertId.
	EventIDsReturned bool
	// StateGuard is the column expression a transition's state guard uses,
	// one that no index matches, so that the row is found by id, never by
	// a state index (SQLite: "+state"; PostgreSQL: "(state || '')").
	StateGuard string
	// TagFilter is the condition, with one placeholder for the tag, that
	// the JSON array column table.tags holds the tag.
	TagFilter func(table string) string
	// UniqueViolation and ForeignKeyViolation classify constraint errors.
	UniqueViolation     func(error) bool
	ForeignKeyViolation func(error) bool
	// ExpectRows names the database function f(got, want) that fails the
	// statement unless got = want, and ExpectRowsMissed tells its error
	// (pipelined transitions, pipeline.go).
	ExpectRows       string
	ExpectRowsMissed func(error) bool
	// EventLastID reads the largest event id ever committed: the events'
	// sequence and EventIDMaxima. EventRaise raises the sequence to it.
	EventLastID string
	EventRaise  string
	// EventRaiseTo raises the sequence to its one argument, an id, if it
	// is below it: retention's raise before it deletes events up to that
	// id, which reads no job (EventRaise walks the unfinished jobs for
	// their live attempts' ids).
	EventRaiseTo string
	// JobFrom, when set, is the FROM of a job SELECT instead of
	// sqlstore.JobFrom: the same relation, in a form that makes the
	// dialect's planner find every spec by its key (jobs.go).
	JobFrom string
	// JobDelete, when set, is the statement that deletes one job (its one
	// parameter, the id) and its spec, instead of a DELETE of the job
	// whose foreign key's cascade deletes the spec (SQLite). PostgreSQL's
	// job_specs has no foreign key (its migration 0023; store doc.go,
	// "The job's spec lives beside the hot row").
	JobDelete string
	// TenantUnfinished: a tenant's jobs are indexed by creation while
	// they are unfinished (jobs_tenant_unfinished) and by terminal state
	// once finished (jobs_tenant_final), so a tenant's listing with no
	// state merges the two, as the listing of every job does (store
	// doc.go, "The hot row and its indexes"). PostgreSQL: the finish, not
	// HOT, would give jobs_tenant_created an entry. SQLite keeps
	// jobs_tenant_created, which no update writes.
	TenantUnfinished bool
	// Unindexed is the form (%s: a column) in which a filter on the
	// synthesised events' tenant is written: SQLite's planner, which has
	// no statistics, would otherwise read every job of the tenant rather
	// than walk an event id index and stop at the page's end.
	Unindexed string
}

// rebind rewrites ? placeholders for the dialect.
func (d *Dialect) rebind(q string) string {
	if !d.Numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Core is the SQL shared by the drivers: every read, and the operations
// of a write transaction, on database/sql connections the driver opens.
// The driver owns the transaction: it begins it on WConn, runs the
// caller's function with NewWriter, and commits.
type Core struct {
	D      Dialect
	Window time.Duration // idempotency window
	WDB    *sql.DB       // the pool of one connection WConn comes from
	WConn  *sql.Conn     // the writer connection, held for the store's life
	RDB    *sql.DB       // the read pool
	Closed atomic.Bool   // set by the driver's Close: reads fail with ErrClosed
	// Pipe, when the driver sets it, queues the dispatcher's operations
	// and sends them with the commit (pipeline.go).
	Pipe  Pipeline
	piped pipedSQL
	// ReadBarrier, when the driver sets it, runs before every read: a
	// driver that commits Writes after WriteDeferred returned waits there
	// until they are committed (package sqlite's queued writes).
	ReadBarrier func(ctx context.Context) error

	stmts  [numStmts]*sql.Stmt
	shapes map[transitionShape]*writerStmt // JobTransition statements by shape
	// batches are the multi-row statements of batch.go.
	batches map[batchKey]*writerStmt
	// rawArgs is the argument slice a RawExec statement is run with,
	// reused: one Writer at a time runs on the writer connection.
	rawArgs []driver.NamedValue
	// eventStmts are multi-row event inserts by row count (1..eventChunk).
	eventStmts [eventChunk + 1]*sql.Stmt
	// eventIDStmts are the same with the events' ids given.
	eventIDStmts [eventChunk + 1]*sql.Stmt
}

// Prepare prepares the fixed statements on WConn; call it once WConn and
// the schema are in place.
func (c *Core) Prepare(ctx context.Context) error {
	c.shapes = map[transitionShape]*writerStmt{}
	c.batches = map[batchKey]*writerStmt{}
	for id, q := range stmtSQL {
		if stmtID(id) == stmtJobDelete && c.D.JobDelete != "" {
			q = c.D.JobDelete
		}
		st, err := c.WConn.PrepareContext(ctx, c.D.rebind(q))
		if err != nil {
			return fmt.Errorf("statement %d: %w", id, err)
		}
		c.stmts[id] = st
	}
	return nil
}

// prepareOn prepares q (with ? placeholders) on the writer connection.
func (c *Core) prepareOn(q string) (*sql.Stmt, error) {
	return c.WConn.PrepareContext(bg, c.D.rebind(q))
}

// CloseWriter closes the prepared statements, the writer connection and
// its pool.
func (c *Core) CloseWriter() error {
	errs := []error{c.closeStatements()}
	if c.WConn != nil {
		errs = append(errs, c.WConn.Close())
	}
	if c.WDB != nil {
		errs = append(errs, c.WDB.Close())
	}
	return errors.Join(errs...)
}

// closeStatements closes every prepared statement.
func (c *Core) closeStatements() error {
	var errs []error
	for _, st := range c.stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for _, st := range c.shapes {
		errs = append(errs, c.closeWriterStmt(st))
	}
	for _, st := range c.batches {
		errs = append(errs, c.closeWriterStmt(st))
	}
	for _, st := range append(c.eventStmts[:], c.eventIDStmts[:]...) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	c.eventStmts, c.eventIDStmts = [eventChunk + 1]*sql.Stmt{}, [eventChunk + 1]*sql.Stmt{}
	return errors.Join(errs...)
}

// Shapes is how many JobTransition statements are prepared (tests).
func (c *Core) Shapes() int { return len(c.shapes) }

// MaxShapes bounds the JobTransition statement cache.
const MaxShapes = maxShapes

// NewWriter is the store.Writer of one transaction the driver began on
// WConn.
func (c *Core) NewWriter() *Writer { return &Writer{s: c} }

// Finish marks the Writer unusable (its transaction ended) and returns
// whether it wrote and the error that broke the transaction, if any.
func (w *Writer) Finish() (wrote bool, broken error) {
	w.done = true
	return w.wrote, w.broken
}

// Errorf is an error with the dialect's prefix.
func (c *Core) errorf(format string, args ...any) error {
	return fmt.Errorf(c.D.Name+": "+format, args...)
}

var _ store.Reader = (*Core)(nil)
