package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// errGoexit is reported for a fn that ended its goroutine with
// runtime.Goexit instead of returning.
var errGoexit = errors.New("scheduler: job called runtime.Goexit")

// loop is the dispatcher goroutine: every wake-up (work arrived, capacity
// freed) runs one dispatch pass. It exits when quit is closed.
func (s *Scheduler) loop() {
	defer close(s.loopDone)
	for {
		select {
		case <-s.wake:
			s.dispatch()
		case <-s.quit:
			return
		}
	}
}

// kick wakes the dispatcher. Wake-ups coalesce: one pending signal is
// enough, since a pass admits everything admissible.
func (s *Scheduler) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dispatch asks the engine for admissions until it has none and starts
// each admitted job in its own goroutine.
func (s *Scheduler) dispatch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for {
		a, ok := s.eng.Next(now)
		if !ok {
			return
		}
		s.start(a, now)
	}
}

// start marks an admitted job running and launches it. Called under mu.
func (s *Scheduler) start(a policy.Assignment, now time.Time) {
	j := s.jobs[a.JobID]
	if j == nil { // every engine job is booked in s.jobs; never expected
		s.log.Error("scheduler: admitted job is unknown", slog.String("id", a.JobID))
		if _, err := s.eng.Finish(a.JobID, now, policy.Cancelled); err != nil {
			s.log.Error("scheduler: finish unknown job", slog.String("id", a.JobID), slog.Any("error", err))
		}
		return
	}
	ctx, cancel := context.WithCancel(j.parent)
	j.running, j.cancel = true, cancel
	s.countPending(j.typ, -1)
	s.countRunning(j.typ, +1)
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "scheduler: admit",
		slog.String("type", string(j.typ)), slog.String("job_id", j.key),
		slog.String("fairness_key", j.fairnessKey), slog.Float64("cost", a.Cost), slog.Int64("score", a.Score))
	s.changed()
	s.runs.Add(1)
	go s.run(ctx, j)
}

// run executes fn and completes the job however fn ends: return, panic
// (recovered into a *PanicError) or runtime.Goexit.
func (s *Scheduler) run(ctx context.Context, j *job) {
	defer s.runs.Done()
	err := errGoexit
	defer func() { s.complete(ctx, j, err) }()
	err = call(ctx, j.fn)
}

func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// complete tells the engine the job ended (its run time feeds the cost
// estimate), frees its slot, wakes the dispatcher and delivers the result.
func (s *Scheduler) complete(ctx context.Context, j *job, err error) {
	out := policy.Succeeded
	switch {
	case err != nil && ctx.Err() != nil:
		out = policy.Cancelled
	case err != nil:
		out = policy.Failed
	}
	j.cancel()
	s.finish(j, out)
	if j.result != nil {
		j.result <- err
		return
	}
	if err != nil {
		s.log.Error("scheduler: background job failed", slog.String("type", string(j.typ)),
			slog.String("job_id", j.key), slog.Any("error", err))
	}
}

func (s *Scheduler) finish(j *job, out policy.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.eng.Finish(j.id, s.clock.Now(), out); err != nil {
		s.log.Error("scheduler: finish job", slog.String("id", j.id), slog.Any("error", err))
	}
	delete(s.jobs, j.id)
	s.countRunning(j.typ, -1)
	s.changed()
	s.kick()
}

// changed records a state change under mu: it wakes watchers (tests wait
// on it instead of sleeping) and, once closed with no job left, signals
// that the scheduler drained.
func (s *Scheduler) changed() {
	if s.watchers != nil {
		close(s.watchers)
		s.watchers = nil
	}
	if s.closed && len(s.jobs) == 0 && !s.isDrain {
		s.isDrain = true
		close(s.drained)
	}
}

// changes returns a channel closed at the next state change: a submission,
// an admission, a finish, a withdrawal or the start of shutdown.
func (s *Scheduler) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchers == nil {
		s.watchers = make(chan struct{})
	}
	return s.watchers
}
