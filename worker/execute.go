package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Limits of a completion (the server refuses larger ones).
const (
	maxErrorLen  = 8 << 10
	maxResultLen = 256 << 10
)

// execute runs one attempt and queues its report.
func (w *Worker) execute(t *task) {
	t.gate.await(t)
	t.markStarted(time.Now().UTC())
	var (
		res        json.RawMessage
		err, cause error
	)
	if h := w.handlerFor(t.job.Type); h != nil {
		res, err, cause = w.invoke(t, h)
	} else {
		t.gate.started()
		err = Fail(api.FailStartError, fmt.Errorf("no handler for job type %q on this worker", t.job.Type))
	}
	w.finish(t, res, err, cause)
}

func (w *Worker) handlerFor(typ string) Handler {
	if h := w.opts.Handlers[typ]; h != nil {
		return h
	}
	return w.opts.Handlers["*"]
}

// invoke runs the handler with the attempt's context, bounded by the job's
// timeout under a strict SLA policy. It returns why the context ended, if
// it did, before it is released.
func (w *Worker) invoke(t *task, h Handler) (res json.RawMessage, err, cause error) {
	ctx := t.ctx
	if d := strictTimeout(t.job); d > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		t.mu.Lock()
		t.timeout = d
		t.deadline = time.AfterFunc(d, func() { w.deadlineReached(t, cancel) })
		t.mu.Unlock()
		defer t.stopDeadline()
	}
	defer func() {
		if r := recover(); r != nil {
			w.log.Error("handler panicked", "job", t.key.jobID, "attempt", t.key.attempt,
				"panic", r, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("handler panicked: %v", r)
		}
		cause = context.Cause(ctx)
	}()
	view := w.jobView(t)
	// The gate opens last, just before the handler runs: the attempts of
	// lower priority behind it have their own set-up to do before theirs
	// does, so the handlers begin in the order of the answer.
	t.gate.started()
	res, err = h.Run(ctx, view)
	return res, err, nil
}

// confirmWait bounds how long a worker asks the server about a strict
// deadline before it kills anyway.
const confirmWait = 2 * time.Second

// deadlineReached runs when an attempt's strict deadline passes on the
// worker's clock. The server may have extended the SLA since the last
// heartbeat, so the worker asks it first: one heartbeat, whose answer
// carries the attempt's current limit (applyHeartbeat). The attempt is
// killed only if the limit still lies behind, or if the server cannot be
// asked within confirmWait.
func (w *Worker) deadlineReached(t *task, cancel context.CancelCauseFunc) {
	ctx, done := context.WithTimeout(w.netCtx, confirmWait)
	defer done()
	w.heartbeat(ctx, t.sess, 0)
	if t.rearm() {
		w.log.Info("deadline extended by the server before the kill", "job", t.key.jobID, "attempt", t.key.attempt)
		return
	}
	cancel(ErrTimeout)
}

// strictTimeout is the job's run-time limit if its SLA policy kills at the
// limit (strict, the default); 0 means none.
func strictTimeout(j api.Job) time.Duration {
	if j.TimeoutMS <= 0 || (j.SLAPolicy != "" && j.SLAPolicy != "strict") {
		return 0
	}
	return time.Duration(j.TimeoutMS) * time.Millisecond
}

func (w *Worker) jobView(t *task) Job {
	return Job{
		Job:            t.job,
		WorkerID:       t.sess.id,
		LeaseExpiresAt: t.expires,
		stdout:         logWriter{s: w.logs, t: t, stream: "stdout"},
		stderr:         logWriter{s: w.logs, t: t, stream: "stderr"},
		t:              t,
	}
}

// finish ends an attempt: its report is queued, or it is forgotten when
// there is nothing to report (revoked, or handed back at shutdown).
func (w *Worker) finish(t *task, res json.RawMessage, err, cause error) {
	finished := time.Now().UTC()
	t.markFinished()
	dropped := w.logs.close(t)
	c, report := t.verdict(res, err, cause, finished)
	c.OutputDroppedBytes = dropped
	if report {
		t.completion = c
	} else if !t.isDropped() {
		w.log.Info("job stopped at shutdown; handing it back", "job", t.key.jobID, "attempt", t.key.attempt)
	}
	if report && w.markReporting(t) {
		w.completes.add(t)
	} else {
		w.forget(t)
	}
	w.doneRunning(t)
}

// verdict builds the attempt's completion; false means report nothing.
func (t *task) verdict(res json.RawMessage, err, cause error, finished time.Time) (api.Completion, bool) {
	t.mu.Lock()
	dropped, exit, usage := t.dropped, t.exitCode, t.usage
	t.mu.Unlock()
	started := t.startedAt
	c := api.Completion{
		JobID: t.key.jobID, Attempt: t.key.attempt, ExitCode: exit,
		StartedAt: &started, FinishedAt: &finished, Usage: usage,
	}
	switch {
	case dropped:
		return c, false
	case err == nil:
		succeed(&c, res)
	case errors.Is(cause, ErrCancelled):
		c.Outcome, c.FailureClass, c.Error = api.OutcomeCancelled, api.FailCancelled, "cancelled on request"
	case errors.Is(cause, ErrPreempted):
		c.Outcome, c.FailureClass, c.Error = api.OutcomePreempted, api.FailPreempted, "preempted for a job of higher priority"
	case errors.Is(cause, ErrShutdown):
		return c, false
	case errors.Is(cause, ErrTimeout):
		c.Outcome, c.FailureClass = api.OutcomeFailed, api.FailTimeout
		c.Error = fmt.Sprintf("timed out after %s", time.Duration(t.job.TimeoutMS)*time.Millisecond)
	case snoozed(&c, err):
	default:
		setFailure(&c, err)
	}
	return c, true
}

func succeed(c *api.Completion, res json.RawMessage) {
	switch {
	case len(res) > maxResultLen:
		c.Outcome, c.FailureClass = api.OutcomeFailed, api.FailExitCode
		c.Error = fmt.Sprintf("the handler's result has %d bytes, more than the %d allowed", len(res), maxResultLen)
		return
	case len(res) > 0 && !json.Valid(res):
		c.Outcome, c.FailureClass = api.OutcomeFailed, api.FailExitCode
		c.Error = "the handler's result is not valid JSON"
		return
	}
	c.Outcome = api.OutcomeSucceeded
	if string(res) != "null" {
		c.Result = res
	}
}

func setFailure(c *api.Completion, err error) {
	c.Outcome, c.FailureClass = api.OutcomeFailed, api.FailExitCode
	var f *Failure
	if errors.As(err, &f) {
		c.FailureClass = f.class()
		if f.ExitCode != nil {
			c.ExitCode = f.ExitCode
		}
	}
	if c.FailureClass == api.FailCancelled {
		c.Outcome = api.OutcomeCancelled
	}
	c.Error = truncate(err.Error(), maxErrorLen)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:utf8Cut([]byte(s), n)] + "…"
}
