package queued

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

var bg = context.Background()

// Recorder is the store.Writer of a WriteDeferred: it records the
// operations that may run later and turns the Write direct at the first
// one that must answer now (doc.go).
type Recorder struct {
	ops []Op
	// rows are the rows the recorded operations insert or change, kept
	// when trackRows is set (a concurrent Applier's: see StartConcurrent):
	// job ids (a job, its executions) and "worker:" and a worker's id.
	rows      []string
	trackRows bool
	direct    store.Writer // set once the Write runs in its own transaction
	open      func() (store.Writer, error)
	err       error // the failure to go direct: every later operation gets it
	done      bool  // the Write returned: the recorder is unusable
}

var errWriterDone = errors.New("store: Writer used after its Write returned")

// newRecorder returns a Recorder that keeps the rows it touches if
// trackRows is set; open begins the Write's own transaction (after the
// Applier has drained) and returns its Writer.
func newRecorder(trackRows bool, open func() (store.Writer, error)) *Recorder {
	return &Recorder{open: open, trackRows: trackRows}
}

var _ store.Writer = (*Recorder)(nil)

// now returns the Writer of the Write's own transaction, beginning it
// (after the queue is committed) and replaying what was recorded.
func (r *Recorder) now() (store.Writer, error) {
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

// record keeps o for the applier, and, when r tracks rows, the rows
// touch adds to r.rows; or it runs o now in a direct Write.
func (r *Recorder) record(ctx context.Context, o Op, touch func(rows []string) []string) error {
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
	if r.trackRows && touch != nil {
		r.rows = touch(r.rows)
	}
	return nil
}

func (r *Recorder) JobInsertBatched(ctx context.Context, j store.Job) error {
	if j.Unique != nil { // the unique rule's claim answers now, with the row
		return r.JobInsert(ctx, j)
	}
	if j.IdempotencyKey != "" { // the claim answers now; the driver may still hold the row
		return r.direct1(func(w store.Writer) error { return w.JobInsertBatched(ctx, j) })
	}
	if err := j.Validate(); err != nil {
		return err
	}
	j = cloneJob(j)
	return r.record(ctx, func(w store.Writer) error { return w.JobInsertBatched(bg, j) },
		func(rows []string) []string { return append(rows, j.ID) })
}

// JobInsertFreeKey records a keyed insert whose key the caller found
// free: nothing answers before the commit (a held key fails the
// transaction), so the Write stays deferred. The key is one of the rows
// it touches, so that a concurrent Applier never runs two claims of one
// key at once.
func (r *Recorder) JobInsertFreeKey(ctx context.Context, j store.Job) error {
	if j.IdempotencyKey == "" || j.Unique != nil {
		return r.JobInsertBatched(ctx, j)
	}
	if err := j.Validate(); err != nil {
		return err
	}
	j = cloneJob(j)
	return r.record(ctx, func(w store.Writer) error { return w.JobInsertFreeKey(bg, j) },
		func(rows []string) []string { return append(rows, j.ID, "key:"+j.Tenant+"\x00"+j.IdempotencyKey) })
}

func (r *Recorder) JobTransitionBatched(ctx context.Context, p store.JobTransitionParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	c := cloneTransition(p) // the operation captures c, and p stays on the stack
	return r.record(ctx, func(w store.Writer) error { return w.JobTransitionBatched(bg, *c) },
		func(rows []string) []string { return append(rows, c.ID) })
}

func (r *Recorder) ExecutionUpsertMany(ctx context.Context, es []store.Execution) error {
	for i := range es {
		if err := es[i].Validate(); err != nil {
			return err
		}
	}
	es = slices.Clone(es)
	return r.record(ctx, func(w store.Writer) error { return w.ExecutionUpsertMany(bg, es) },
		func(rows []string) []string {
			for _, e := range es {
				rows = append(rows, e.JobID)
			}
			return rows
		})
}

// EventAppend records the events; their ids are set in the caller's
// slice when the applier inserts them, before the Write's channel
// reports.
func (r *Recorder) EventAppend(ctx context.Context, events []store.Event) error {
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return err
		}
	}
	return r.record(ctx, func(w store.Writer) error { return w.EventAppend(bg, events) }, nil)
}

func (r *Recorder) WorkerUpsert(ctx context.Context, wk store.Worker) error {
	if err := wk.Validate(); err != nil {
		return err
	}
	wk.Types, wk.Labels, wk.Handlers = slices.Clone(wk.Types), slices.Clone(wk.Labels), slices.Clone(wk.Handlers)
	return r.record(ctx, func(w store.Writer) error { return w.WorkerUpsert(bg, wk) },
		func(rows []string) []string { return append(rows, "worker:"+wk.ID) })
}

// The operations below answer at once: they run in the Write's own
// transaction.

func (r *Recorder) JobInsert(ctx context.Context, j store.Job) error {
	return r.direct1(func(w store.Writer) error { return w.JobInsert(ctx, j) })
}

func (r *Recorder) JobTransition(ctx context.Context, p store.JobTransitionParams) error {
	return r.direct1(func(w store.Writer) error { return w.JobTransition(ctx, p) })
}

func (r *Recorder) JobDeleteFinished(ctx context.Context, before time.Time, limit int) (store.Purged, error) {
	w, err := r.now()
	if err != nil {
		return store.Purged{}, err
	}
	return w.JobDeleteFinished(ctx, before, limit)
}

func (r *Recorder) EventDeleteBefore(ctx context.Context, before time.Time, limit int) (store.Purged, error) {
	w, err := r.now()
	if err != nil {
		return store.Purged{}, err
	}
	return w.EventDeleteBefore(ctx, before, limit)
}

func (r *Recorder) IdempotencyPurge(ctx context.Context, before time.Time, limit int) (store.Purged, error) {
	w, err := r.now()
	if err != nil {
		return store.Purged{}, err
	}
	return w.IdempotencyPurge(ctx, before, limit)
}

func (r *Recorder) ExecutionUpsert(ctx context.Context, e store.Execution) error {
	return r.direct1(func(w store.Writer) error { return w.ExecutionUpsert(ctx, e) })
}

func (r *Recorder) ExecutionResultUpdate(ctx context.Context, u store.ResultUpdate) error {
	return r.direct1(func(w store.Writer) error { return w.ExecutionResultUpdate(ctx, u) })
}

func (r *Recorder) LogAppend(ctx context.Context, chunks []store.LogChunk) error {
	return r.direct1(func(w store.Writer) error { return w.LogAppend(ctx, chunks) })
}

func (r *Recorder) WorkerTouch(ctx context.Context, id string, at time.Time) error {
	return r.direct1(func(w store.Writer) error { return w.WorkerTouch(ctx, id, at) })
}

func (r *Recorder) WorkerDelete(ctx context.Context, id string) error {
	return r.direct1(func(w store.Writer) error { return w.WorkerDelete(ctx, id) })
}

func (r *Recorder) ScheduleUpsert(ctx context.Context, sc store.Schedule) error {
	return r.direct1(func(w store.Writer) error { return w.ScheduleUpsert(ctx, sc) })
}

func (r *Recorder) ScheduleDelete(ctx context.Context, id string) error {
	return r.direct1(func(w store.Writer) error { return w.ScheduleDelete(ctx, id) })
}

func (r *Recorder) WebhookInsert(ctx context.Context, h store.Webhook) error {
	return r.direct1(func(w store.Writer) error { return w.WebhookInsert(ctx, h) })
}

func (r *Recorder) WebhookDelete(ctx context.Context, name string) error {
	return r.direct1(func(w store.Writer) error { return w.WebhookDelete(ctx, name) })
}

func (r *Recorder) LaneStateSet(ctx context.Context, l store.LaneState) error {
	return r.direct1(func(w store.Writer) error { return w.LaneStateSet(ctx, l) })
}

func (r *Recorder) APIKeyInsert(ctx context.Context, k store.APIKey) error {
	return r.direct1(func(w store.Writer) error { return w.APIKeyInsert(ctx, k) })
}

func (r *Recorder) APIKeyDelete(ctx context.Context, keyHash string) error {
	return r.direct1(func(w store.Writer) error { return w.APIKeyDelete(ctx, keyHash) })
}

// direct1 runs one answering operation in the Write's own transaction.
func (r *Recorder) direct1(o Op) error {
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

// transitionValues holds a recorded transition's params and what their
// pointers and from states point at (cloneTransition): one allocation
// where a pointer each took one, twice per drained job. The held attempt
// (368 bytes) has an allocation of its own, made only by the transitions
// that carry one (a drained job's finish, not its lease): inside, it put
// every transition in the 1,152-byte size class instead of 704.
type transitionValues struct {
	p                                                                      store.JobTransitionParams
	from                                                                   [2]store.State
	state                                                                  store.State
	attempt, returned, snoozes, priority, exitCode, maxAttempts, submitPri int
	worker, lastError                                                      string
	leaseExpires, enqueued, started, finished, runAt, leasedAt, startAt    time.Time
	cancel, held                                                           bool
	class                                                                  store.FailureClass
	result                                                                 []byte
	timeout, expected                                                      time.Duration
	leaseEvent, startEvent                                                 int64
}

// cloneTransition copies a transition's params and values, so that the
// caller may change what its pointers and from states point at once the
// operation returned. A held attempt is copied as a value (its own
// pointers are shared: the dispatcher builds it for the transition).
func cloneTransition(p store.JobTransitionParams) *store.JobTransitionParams {
	v := new(transitionValues)
	if len(p.FromStates) <= len(v.from) {
		p.FromStates = v.from[:copy(v.from[:], p.FromStates):len(p.FromStates)]
	} else {
		p.FromStates = slices.Clone(p.FromStates)
	}
	s := &p.Set
	s.State, s.Attempt, s.ReturnedLeases = into(s.State, &v.state), into(s.Attempt, &v.attempt), into(s.ReturnedLeases, &v.returned)
	s.Snoozes, s.Priority, s.WorkerID = into(s.Snoozes, &v.snoozes), into(s.Priority, &v.priority), into(s.WorkerID, &v.worker)
	s.LeaseExpiresAt, s.EnqueuedAt = into(s.LeaseExpiresAt, &v.leaseExpires), into(s.EnqueuedAt, &v.enqueued)
	s.StartedAt, s.FinishedAt, s.RunAt = into(s.StartedAt, &v.started), into(s.FinishedAt, &v.finished), into(s.RunAt, &v.runAt)
	s.CancelRequested, s.Held, s.LastError = into(s.CancelRequested, &v.cancel), into(s.Held, &v.held), into(s.LastError, &v.lastError)
	s.ExitCode, s.FailureClass = into(s.ExitCode, &v.exitCode), into(s.FailureClass, &v.class)
	if s.Result != nil {
		v.result = slices.Clone(*s.Result)
		s.Result = &v.result
	}
	s.Timeout, s.Expected, s.MaxAttempts = into(s.Timeout, &v.timeout), into(s.Expected, &v.expected), into(s.MaxAttempts, &v.maxAttempts)
	s.LeaseEventID, s.LeasedAt = into(s.LeaseEventID, &v.leaseEvent), into(s.LeasedAt, &v.leasedAt)
	s.StartEventID, s.StartEventAt = into(s.StartEventID, &v.startEvent), into(s.StartEventAt, &v.startAt)
	s.SubmitPriority, s.HeldAttempt = into(s.SubmitPriority, &v.submitPri), clonePtr(s.HeldAttempt)
	v.p = p
	return &v.p
}

// into copies *p to *dst and returns dst; nil if p is.
func into[T any](p, dst *T) *T {
	if p == nil {
		return nil
	}
	*dst = *p
	return dst
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
