package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Queued writes: see "Queued writes" in doc.go for the design and what
// each guarantee rests on.

// op is one recorded Writer operation, replayed by the applier.
type op func(w store.Writer) error

// queued is one recorded Write waiting for, or inside, the applier's
// transaction.
type queued struct {
	ops     []op
	durable chan error    // what WriteDeferred returned: nil once durable
	applied chan struct{} // closed once committed or failed (reads wait on it)
}

// errApplyFailed marks the failure of the applier's transaction: the
// store refuses writes until resumed (doc.go).
var errApplyFailed = errors.New("sqlite: a queued transaction failed; the store refuses writes until its writer has rebuilt its state and resumed")

// applier runs queued Writes in transactions of its own goroutine.
type applier struct {
	s *Store

	mu       sync.Mutex
	cond     *sync.Cond // signalled when queue or inTx changes
	queue    []*queued  // waiting, in WriteDeferred order
	inTx     []*queued  // taken by the running transaction
	ready    *readiness
	err      error // sticky
	stopping bool
	done     chan struct{}
}

// maxWaiting is how many recorded Writes may wait for the applier; the
// next WriteDeferred waits for it to take them.
const maxWaiting = 1

func startApplier(s *Store, ready *readiness) *applier {
	a := &applier{s: s, ready: ready, done: make(chan struct{})}
	a.cond = sync.NewCond(&a.mu)
	go a.run()
	return a
}

// enqueue hands a recorded Write to the applier, first waiting while
// maxWaiting others wait. The caller holds the store's wmu.
func (a *applier) enqueue(ops []op) <-chan error {
	q := &queued{ops: ops, durable: make(chan error, 1), applied: make(chan struct{})}
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.queue) >= maxWaiting && a.err == nil {
		a.cond.Wait()
	}
	if a.err != nil {
		q.durable <- a.err
		close(q.applied)
		return q.durable
	}
	a.queue = append(a.queue, q)
	a.ready.setWaiting(len(a.queue))
	a.cond.Broadcast()
	return q.durable
}

// idle reports whether nothing is queued or being applied; the caller
// holds mu.
func (a *applier) idle() bool { return len(a.queue) == 0 && len(a.inTx) == 0 }

// barrier waits until everything queued when it was called has been
// committed (or has failed).
func (a *applier) barrier(ctx context.Context) error {
	a.mu.Lock()
	var last *queued
	switch {
	case len(a.queue) > 0:
		last = a.queue[len(a.queue)-1]
	case len(a.inTx) > 0:
		last = a.inTx[len(a.inTx)-1]
	}
	a.mu.Unlock()
	if last == nil {
		return nil
	}
	select {
	case <-last.applied:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain waits, without a deadline, until the applier is idle. The caller
// holds wmu, so nothing new is queued meanwhile.
func (a *applier) drain() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for !a.idle() {
		a.cond.Wait()
	}
}

// resume accepts writes again after a failed queued transaction.
func (a *applier) resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = nil
}

// failed returns the sticky error of a failed queued transaction.
func (a *applier) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *applier) run() {
	defer close(a.done)
	for {
		a.mu.Lock()
		for len(a.queue) == 0 && !a.stopping {
			a.cond.Wait()
		}
		if len(a.queue) == 0 {
			a.mu.Unlock()
			return
		}
		a.inTx, a.queue = a.queue, nil
		a.ready.setWaiting(0)
		a.cond.Broadcast()
		batch := a.inTx
		a.mu.Unlock()

		a.apply(batch)

		a.mu.Lock()
		a.inTx = nil
		a.cond.Broadcast()
		a.mu.Unlock()
	}
}

// apply runs the batch's operations in one transaction on the writer
// connection and registers the commit with the syncer; a failure fails
// the batch and everything after it.
func (a *applier) apply(batch []*queued) {
	s := a.s
	if !slices.ContainsFunc(batch, func(q *queued) bool { return len(q.ops) > 0 }) {
		for _, q := range batch {
			s.sync.commitTo(false, q.durable)
			close(q.applied)
		}
		return
	}
	s.conn.Lock()
	wrote, err := s.transact(bg, func(w store.Writer) error {
		for _, q := range batch {
			for _, o := range q.ops {
				if err := o(w); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		s.conn.Unlock()
		a.fail(batch, err)
		return
	}
	if s.ckpt != nil {
		s.ckpt.notify()
	}
	for i, q := range batch {
		// One commit: the first batch registers it, the others are
		// durable with it.
		s.sync.commitTo(wrote && i == 0, q.durable)
		close(q.applied)
	}
	s.conn.Unlock()
}

// fail answers the failed batch and everything queued behind it with the
// error, and makes the store refuse writes.
func (a *applier) fail(batch []*queued, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.err = fmt.Errorf("%w: %w", errApplyFailed, err)
	for _, q := range append(batch, a.queue...) {
		q.durable <- a.err
		close(q.applied)
	}
	a.queue = nil
	a.ready.setWaiting(0)
}

// close applies what is queued and stops the goroutine.
func (a *applier) close() {
	a.mu.Lock()
	a.stopping = true
	a.cond.Broadcast()
	a.mu.Unlock()
	<-a.done
}

// readiness is Ready's channel: closed while no recorded Write waits for
// the applier and no fsync runs. A batch formed while the disk works
// would wait for the next fsync anyway, and gathering more commands into
// it costs their answers nothing and saves a commit; a batch formed while
// the applier runs the previous one overlaps the caller's work with the
// store's. The applier and the syncer report their state changes.
type readiness struct {
	mu      sync.Mutex
	ch      chan struct{}
	waiting int  // recorded Writes waiting for the applier
	syncing bool // an fsync runs
}

func newReadiness() *readiness {
	r := &readiness{ch: make(chan struct{})}
	close(r.ch)
	return r
}

func (r *readiness) channel() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ch
}

func (r *readiness) setWaiting(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = n
	r.update()
}

func (r *readiness) setSyncing(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncing = on
	r.update()
}

// update opens or closes ch to match the state; the caller holds mu.
func (r *readiness) update() {
	ready := r.waiting == 0 && !r.syncing
	closed := false
	select {
	case <-r.ch:
		closed = true
	default:
	}
	switch {
	case ready && !closed:
		close(r.ch)
	case !ready && closed:
		r.ch = make(chan struct{})
	}
}

// recorder is the store.Writer of a WriteDeferred: it records the
// operations that may run later and turns the Write direct at the first
// one that must answer now (doc.go).
type recorder struct {
	s      *Store
	ops    []op
	direct store.Writer // set once the Write runs in its own transaction
	open   func() (store.Writer, error)
	err    error // the failure to go direct: every later operation gets it
	done   bool  // the Write returned: the recorder is unusable
}

var errWriterDone = errors.New("store: Writer used after its Write returned")

var _ store.Writer = (*recorder)(nil)

// now returns the Writer of the Write's own transaction, beginning it
// (after the queue is committed) and replaying what was recorded.
func (r *recorder) now() (store.Writer, error) {
	if r.done {
		return nil, errWriterDone
	}
	if r.direct != nil || r.err != nil {
		return r.direct, r.err
	}
	w, err := r.open()
	if err == nil {
		for _, o := range r.ops {
			if err = o(w); err != nil {
				break
			}
		}
	}
	r.ops = nil
	if err != nil {
		r.err = err
		return nil, err
	}
	r.direct = w
	return w, nil
}

// record keeps o for the applier, or runs it now in a direct Write.
func (r *recorder) record(ctx context.Context, o op) error {
	if r.done {
		return errWriterDone
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.direct != nil || r.err != nil {
		return r.direct1(o)
	}
	r.ops = append(r.ops, o)
	return nil
}

func (r *recorder) JobInsertBatched(ctx context.Context, j store.Job) error {
	if j.IdempotencyKey != "" {
		return r.JobInsert(ctx, j)
	}
	if err := j.Validate(); err != nil {
		return err
	}
	j = cloneJob(j)
	return r.record(ctx, func(w store.Writer) error { return w.JobInsertBatched(bg, j) })
}

func (r *recorder) JobTransitionBatched(ctx context.Context, p store.JobTransitionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	p.FromStates = slices.Clone(p.FromStates)
	p.Set = cloneSet(p.Set)
	return r.record(ctx, func(w store.Writer) error { return w.JobTransitionBatched(bg, p) })
}

func (r *recorder) ExecutionUpsertMany(ctx context.Context, es []store.Execution) error {
	for i := range es {
		if err := es[i].Validate(); err != nil {
			return err
		}
	}
	es = slices.Clone(es)
	return r.record(ctx, func(w store.Writer) error { return w.ExecutionUpsertMany(bg, es) })
}

// EventAppend records the events; their ids are set in the caller's
// slice when the applier inserts them, before the Write's channel
// reports.
func (r *recorder) EventAppend(ctx context.Context, events []store.Event) error {
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return err
		}
	}
	return r.record(ctx, func(w store.Writer) error { return w.EventAppend(bg, events) })
}

func (r *recorder) WorkerUpsert(ctx context.Context, wk store.Worker) error {
	if err := wk.Validate(); err != nil {
		return err
	}
	wk.Types, wk.Labels, wk.Handlers = slices.Clone(wk.Types), slices.Clone(wk.Labels), slices.Clone(wk.Handlers)
	return r.record(ctx, func(w store.Writer) error { return w.WorkerUpsert(bg, wk) })
}

// The operations below answer at once: they run in the Write's own
// transaction.

func (r *recorder) JobInsert(ctx context.Context, j store.Job) error {
	return r.direct1(func(w store.Writer) error { return w.JobInsert(ctx, j) })
}

func (r *recorder) JobTransition(ctx context.Context, p store.JobTransitionParams) error {
	return r.direct1(func(w store.Writer) error { return w.JobTransition(ctx, p) })
}

func (r *recorder) JobDeleteFinished(ctx context.Context, before time.Time, limit int) (int64, error) {
	w, err := r.now()
	if err != nil {
		return 0, err
	}
	return w.JobDeleteFinished(ctx, before, limit)
}

func (r *recorder) IdempotencyPurge(ctx context.Context, before time.Time) (int64, error) {
	w, err := r.now()
	if err != nil {
		return 0, err
	}
	return w.IdempotencyPurge(ctx, before)
}

func (r *recorder) ExecutionUpsert(ctx context.Context, e store.Execution) error {
	return r.direct1(func(w store.Writer) error { return w.ExecutionUpsert(ctx, e) })
}

func (r *recorder) ExecutionResultUpdate(ctx context.Context, u store.ResultUpdate) error {
	return r.direct1(func(w store.Writer) error { return w.ExecutionResultUpdate(ctx, u) })
}

func (r *recorder) LogAppend(ctx context.Context, chunks []store.LogChunk) error {
	return r.direct1(func(w store.Writer) error { return w.LogAppend(ctx, chunks) })
}

func (r *recorder) WorkerTouch(ctx context.Context, id string, at time.Time) error {
	return r.direct1(func(w store.Writer) error { return w.WorkerTouch(ctx, id, at) })
}

func (r *recorder) WorkerDelete(ctx context.Context, id string) error {
	return r.direct1(func(w store.Writer) error { return w.WorkerDelete(ctx, id) })
}

func (r *recorder) ScheduleUpsert(ctx context.Context, sc store.Schedule) error {
	return r.direct1(func(w store.Writer) error { return w.ScheduleUpsert(ctx, sc) })
}

func (r *recorder) ScheduleDelete(ctx context.Context, id string) error {
	return r.direct1(func(w store.Writer) error { return w.ScheduleDelete(ctx, id) })
}

func (r *recorder) WebhookInsert(ctx context.Context, h store.Webhook) error {
	return r.direct1(func(w store.Writer) error { return w.WebhookInsert(ctx, h) })
}

func (r *recorder) WebhookDelete(ctx context.Context, name string) error {
	return r.direct1(func(w store.Writer) error { return w.WebhookDelete(ctx, name) })
}

func (r *recorder) LaneStateSet(ctx context.Context, l store.LaneState) error {
	return r.direct1(func(w store.Writer) error { return w.LaneStateSet(ctx, l) })
}

func (r *recorder) APIKeyInsert(ctx context.Context, k store.APIKey) error {
	return r.direct1(func(w store.Writer) error { return w.APIKeyInsert(ctx, k) })
}

func (r *recorder) APIKeyDelete(ctx context.Context, keyHash string) error {
	return r.direct1(func(w store.Writer) error { return w.APIKeyDelete(ctx, keyHash) })
}

// direct1 runs one answering operation in the Write's own transaction.
func (r *recorder) direct1(o op) error {
	w, err := r.now()
	if err != nil {
		return err
	}
	return o(w)
}

// cloneJob copies what a recorded insert must not share with the caller.
func cloneJob(j store.Job) store.Job {
	j.Labels, j.Tags, j.Command = slices.Clone(j.Labels), slices.Clone(j.Tags), slices.Clone(j.Command)
	j.Env, j.Payload, j.Result = maps.Clone(j.Env), slices.Clone(j.Payload), slices.Clone(j.Result)
	j.DependsOn = slices.Clone(j.DependsOn)
	j.ExitCode = clonePtr(j.ExitCode)
	return j
}

// cloneSet copies a transition's values, so that the caller may change
// what its pointers point at once the operation returned.
func cloneSet(s store.JobSet) store.JobSet {
	s.State, s.Attempt, s.ReturnedLeases = clonePtr(s.State), clonePtr(s.Attempt), clonePtr(s.ReturnedLeases)
	s.Priority, s.WorkerID = clonePtr(s.Priority), clonePtr(s.WorkerID)
	s.LeaseExpiresAt, s.EnqueuedAt, s.StartedAt = clonePtr(s.LeaseExpiresAt), clonePtr(s.EnqueuedAt), clonePtr(s.StartedAt)
	s.FinishedAt, s.RunAt = clonePtr(s.FinishedAt), clonePtr(s.RunAt)
	s.CancelRequested, s.Held, s.LastError = clonePtr(s.CancelRequested), clonePtr(s.Held), clonePtr(s.LastError)
	s.ExitCode, s.FailureClass = clonePtr(s.ExitCode), clonePtr(s.FailureClass)
	if s.Result != nil {
		res := slices.Clone(*s.Result)
		s.Result = &res
	}
	s.Timeout, s.Expected, s.MaxAttempts = clonePtr(s.Timeout), clonePtr(s.Expected), clonePtr(s.MaxAttempts)
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
