package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fairwayhq/fairway/internal/store"
)

// pipeline is sqlstore.Pipeline on the writer connection: a pgx.Batch,
// which pgx sends in pipeline mode (every statement, then one Sync) and
// reads back in one round trip. After a failed statement the database
// skips the rest up to the Sync, so a queued COMMIT never follows an
// error.
//
// With holdEvents set (a transaction of the concurrent applier), the
// statements that draw event ids or move their sequence (QueueDraw: the
// inserts of events the store numbers, the raise before them) are held
// back, out of Pending and Send, until releaseHeld queues them: they then
// run with the COMMIT, after the transaction before has committed, so
// that event ids increase in commit order and the raise, which reads the
// largest id and then sets the sequence, sees that transaction's ids and
// races none of its draws. Every other statement runs at once, even one
// that returns values (a keyed insert's count, read before the commit).
type pipeline struct {
	conn       *sql.Conn
	fence      *Fence
	timeout    time.Duration   // bounds each Send (WithStatementTimeout); 0: none
	failed     func(error)     // told of every error of Send and of a ROLLBACK (Store.noteFailure)
	dead       func() bool     // the store is Broken: Send fails at once
	life       context.Context // ends every round trip when it ends (WithLifetime); nil: none
	batch      *pgx.Batch
	holdEvents bool
	held       []heldStatement
}

// heldStatement is a statement held back by holdEvents.
type heldStatement struct {
	query string
	args  []any
	ids   func([]int64)
}

func (p *pipeline) QueueDraw(query string, args []any, ids func([]int64)) {
	if p.holdEvents {
		p.held = append(p.held, heldStatement{query, args, ids})
		return
	}
	p.Queue(query, args, ids)
}

func (p *pipeline) Queue(query string, args []any, ids func([]int64)) {
	if p.batch == nil {
		p.batch = &pgx.Batch{}
	}
	qq := p.batch.Queue(query, args...)
	if ids == nil {
		return
	}
	qq.Query(func(rows pgx.Rows) error {
		var got []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			got = append(got, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		ids(got)
		return nil
	})
}

// QueueCheck queues a statement whose FWCON (fairway_expect_rows) is
// missed: its error wraps missed.
func (p *pipeline) QueueCheck(query string, args []any, missed error) {
	if p.batch == nil {
		p.batch = &pgx.Batch{}
	}
	p.batch.Queue(query, args...).Fn = func(br pgx.BatchResults) error {
		_, err := br.Exec()
		if err != nil && pgCode(err) == "FWCON" {
			return fmt.Errorf("%w: %w", missed, err)
		}
		return err
	}
}

func (p *pipeline) Pending() int {
	if p.batch == nil {
		return 0
	}
	return p.batch.Len()
}

// Reset drops what is queued and held, and ends holdEvents.
func (p *pipeline) Reset() { p.batch, p.held, p.holdEvents = nil, nil, false }

// releaseHeld queues the statements holdEvents held back, in order.
func (p *pipeline) releaseHeld() {
	held := p.held
	p.held, p.holdEvents = nil, false
	for _, h := range held {
		p.Queue(h.query, h.args, h.ids)
	}
}

// Send sends the batch on the writer connection's pgx.Conn. The fence's
// refusal is named by its Err; a broken connection is ErrUnavailable.
func (p *pipeline) Send(ctx context.Context) error {
	b := p.batch
	p.batch = nil
	if b == nil || b.Len() == 0 {
		return nil
	}
	if p.dead != nil && p.dead() {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, errBroken{})
	}
	ctx, cancel := p.bound(ctx)
	defer cancel()
	err := p.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: the writer connection is a %T, not pgx's", dc)
		}
		return c.Conn().SendBatch(ctx, b).Close()
	})
	if err == nil {
		return nil
	}
	if p.fence != nil && p.fence.Err != nil {
		if ferr := p.fence.Err(err); ferr != nil {
			return ferr
		}
	}
	err = unavailable(err)
	if p.failed != nil {
		p.failed(err)
	}
	return err
}

// bound is ctx ended also by the statement timeout and the lifetime.
func (p *pipeline) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if p.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
	}
	if p.life != nil {
		var cancelLife context.CancelFunc
		ctx, cancelLife = context.WithCancel(ctx)
		stop := context.AfterFunc(p.life, cancelLife)
		inner := cancel
		cancel = func() { stop(); cancelLife(); inner() }
	}
	return ctx, cancel
}
