package queued

import (
	"context"
	"errors"

	"github.com/fairwayhq/fairway/internal/store"
)

// Direct is a Write's own transaction on the caller's goroutine, begun by
// the driver when an operation must answer at once.
type Direct interface {
	// Writer is the transaction's store.Writer.
	Writer() store.Writer
	// End commits the transaction, or rolls it back if fnErr is set or
	// anything fails on the way, releases the writer connection, and
	// returns the channel that reports the commit durable.
	End(ctx context.Context, fnErr error) (<-chan error, error)
}

// errPanicked rolls back a direct Write whose function panicked.
var errPanicked = errors.New("store: Write panicked")

// Write is a driver's WriteDeferred once the store is known open: it
// refuses while a queued transaction's failure stands (Failed) or ctx has
// ended; fn runs on a Recorder; a Write that only recorded is queued and
// its durable channel returned at once; the first operation that must
// answer waits until everything queued is committed (Drain), has begin
// open a Direct transaction and goes on in it. The caller serializes its
// Writes.
func (a *Applier) Write(ctx context.Context, fn func(w store.Writer) error, begin func() (Direct, error)) (<-chan error, error) {
	if err := a.Failed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var direct Direct
	r := newRecorder(a.stage != nil, func() (store.Writer, error) {
		a.Drain()
		if err := a.Failed(); err != nil {
			return nil, err
		}
		d, err := begin()
		if err != nil {
			return nil, err
		}
		direct = d
		return d.Writer(), nil
	})
	err := runOn(r, fn, &direct)
	if direct != nil {
		return direct.End(ctx, err)
	}
	if err == nil {
		err = r.err
	}
	if err != nil {
		return nil, err
	}
	return a.enqueue(r.ops, r.rows), nil
}

// runOn runs fn on r. If fn panics after the Write went direct, its
// transaction is rolled back and the connection released before the
// panic goes on.
func runOn(r *Recorder, fn func(w store.Writer) error, direct *Direct) error {
	ok := false
	defer func() {
		r.done = true
		if !ok && *direct != nil {
			_, _ = (*direct).End(context.Background(), errPanicked)
		}
	}()
	err := fn(r)
	ok = true
	return err
}
