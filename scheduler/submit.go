package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/fairwayhq/fairway/internal/policy"
)

// job is one submission, pending or running. Its fields are written under
// Scheduler.mu, except result, which is sent once by the job's goroutine or
// by whoever drops the job before it starts.
type job struct {
	id          string // unique internal ID, the policy job ID
	typ         JobType
	key         string // the caller's jobID: the resource key
	fairnessKey string
	fn          func(ctx context.Context) error
	parent      context.Context // RunSync's ctx, or Background for Submit
	running     bool
	cancel      context.CancelFunc // set while running
	result      chan error         // buffered(1); nil for Submit
}

// Submit queues fn as background work of jobType on jobID (the resource
// key) with the empty fairness key, and returns at once. fn runs when the
// policy admits it. Submit has seed 001's signature and so no error: an
// error (unknown type, scheduler closed) is logged and the job dropped.
// Use SubmitErr to see it.
func (s *Scheduler) Submit(jobType JobType, jobID string, fn func(ctx context.Context) error) {
	if err := s.SubmitErr(jobType, jobID, fn); err != nil {
		s.log.Error("scheduler: submit dropped", slog.String("type", string(jobType)),
			slog.String("job_id", jobID), slog.Any("error", err))
	}
}

// SubmitErr is Submit reporting why a job was refused: ErrUnknownType or
// ErrClosed, wrapped. Errors returned by fn itself are logged, as nobody
// waits for them.
func (s *Scheduler) SubmitErr(jobType JobType, jobID string, fn func(ctx context.Context) error) error {
	_, err := s.enqueue(context.Background(), jobType, jobID, "", fn, false)
	return err
}

// RunSync queues fn as work of jobType on jobID (the resource key),
// charged to fairnessKey (e.g. the client's address), waits until it has
// run and returns its error.
//
// If ctx ends while the job is pending, the job is withdrawn, fn never
// runs and RunSync returns ctx.Err(). If ctx ends while fn runs, the ctx
// passed to fn (derived from ctx, so carrying its values) is cancelled and
// RunSync waits for fn to return, then returns what fn returned. A job
// dropped by Shutdown or Close before it started returns ErrClosed.
func (s *Scheduler) RunSync(ctx context.Context, jobType JobType, jobID, fairnessKey string, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := s.enqueue(ctx, jobType, jobID, fairnessKey, fn, true)
	if err != nil {
		return err
	}
	select {
	case err := <-j.result:
		return err
	case <-ctx.Done():
	}
	if s.withdraw(j) {
		return ctx.Err()
	}
	return <-j.result
}

// enqueue hands a new job to the engine and wakes the dispatcher.
func (s *Scheduler) enqueue(parent context.Context, t JobType, key, fk string, fn func(context.Context) error, sync bool) (*job, error) {
	if fn == nil {
		return nil, fmt.Errorf("submit %s/%s: %w: nil fn", t, key, ErrInvalidJob)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("submit %s/%s: %w", t, key, ErrClosed)
	}
	cfg, ok := s.types[t]
	if !ok {
		return nil, fmt.Errorf("submit %s/%s: %w %q", t, key, ErrUnknownType, t)
	}
	s.seq++
	j := &job{id: "j" + strconv.FormatUint(s.seq, 10), typ: t, key: key, fairnessKey: fk, fn: fn, parent: parent}
	if sync {
		j.result = make(chan error, 1)
	}
	pj := policy.Job{ID: j.id, Type: string(t), Key: key, FairnessKey: fk, Priority: int(cfg.Priority), Lane: laneName}
	if err := s.eng.Submit(pj, s.clock.Now()); err != nil {
		return nil, fmt.Errorf("submit %s/%s: %w", t, key, err)
	}
	s.jobs[j.id] = j
	s.countPending(t, +1)
	s.changed()
	s.kick()
	return j, nil
}

// withdraw cancels j in the engine if it has not started. It reports
// whether it did; false means j is running or already finished.
func (s *Scheduler) withdraw(j *job) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.running || s.jobs[j.id] != j {
		return false
	}
	s.dropPending(j)
	return true
}

// dropPending removes a pending job from the engine and the books.
func (s *Scheduler) dropPending(j *job) {
	if _, err := s.eng.Cancel(j.id, s.clock.Now()); err != nil {
		s.log.Error("scheduler: cancel pending job", slog.String("id", j.id), slog.Any("error", err))
	}
	delete(s.jobs, j.id)
	s.countPending(j.typ, -1)
	s.changed()
}
