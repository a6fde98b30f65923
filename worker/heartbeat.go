package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// heartbeatLoop sends a heartbeat every heartbeat_interval_ms (sooner,
// with back-off, after a failure) naming every attempt held: running, or
// done with the completion not yet acknowledged. The server holds each
// heartbeat's answer for up to the interval while it has nothing new to
// say (wait_ms), so a cancel or a new deadline reaches the worker as soon
// as it is committed. The next heartbeat leaves when a held answer comes;
// after an answer that came at once (news, or a server that does not
// hold), it leaves a second (at most an interval) later.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	fails := 0
	var gap time.Duration
	for {
		sess, err := w.session(ctx)
		if err != nil {
			return
		}
		wait := gap
		if fails > 0 {
			wait = min(sess.hbEvery, w.backoff.delay(fails-1, nil))
		}
		if !sleep(ctx, wait) {
			return
		}
		sent := time.Now()
		if !w.heartbeat(ctx, sess, sess.hbEvery) {
			fails++
			continue
		}
		fails, gap = 0, 0
		if time.Since(sent) < sess.hbEvery/2 {
			gap = min(sess.hbEvery, time.Second)
		}
	}
}

// heartbeat sends one heartbeat, letting the server hold it up to wait,
// and applies the answer. It reports whether the request went through (or
// need not be retried).
func (w *Worker) heartbeat(ctx context.Context, sess session, wait time.Duration) bool {
	var resp api.HeartbeatResponse
	callCtx, cancel := context.WithTimeout(ctx, w.opts.RequestTimeout+wait)
	defer cancel()
	err := func() (err error) {
		resp, err = w.client.HeartbeatWait(callCtx, sess.id, w.heldAttempts(sess.gen, sess.hbEvery/2), wait)
		return err
	}()
	if err == nil {
		w.applyHeartbeat(resp)
		return true
	}
	switch classify(err) {
	case errGone:
		w.sessionLost(sess.gen)
		return true
	case errRetry:
		if ctx.Err() == nil {
			w.log.Warn("heartbeat failed", "err", err)
		}
		return false
	}
	w.fail(fmt.Errorf("heartbeat: %w", err))
	return true
}

// heldAttempts lists the attempts held under registration gen. A job is
// running on the server from its lease; an attempt whose handler began at
// least longRun ago (half a heartbeat interval) carries its real start,
// which the server then stores before the job ends. A shorter one's start
// goes with its completion only: reported by a heartbeat too, it would
// cost the server a write of its own.
func (w *Worker) heldAttempts(gen uint64, longRun time.Duration) []api.JobAttempt {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	jobs := make([]api.JobAttempt, 0, len(w.held))
	for _, t := range w.held {
		if t.sess.gen == gen {
			jobs = append(jobs, t.attemptStarted(now.Add(-longRun)))
		}
	}
	return jobs
}

// applyHeartbeat cancels the attempts the server says to cancel (reported
// as cancelled) and stops the revoked ones (not reported).
func (w *Worker) applyHeartbeat(resp api.HeartbeatResponse) {
	for _, a := range resp.Cancel {
		if t := w.heldTask(a); t != nil {
			w.log.Info("cancel requested", "job", a.JobID, "attempt", a.Attempt)
			t.requestCancel()
		}
	}
	for _, a := range resp.Preempt {
		if t := w.heldTask(a); t != nil {
			w.log.Info("preempted: stopping the attempt for a job of higher priority", "job", a.JobID, "attempt", a.Attempt)
			t.requestPreempt()
		}
	}
	for _, d := range resp.Deadlines {
		if t := w.heldTask(api.JobAttempt{JobID: d.JobID, Attempt: d.Attempt}); t != nil {
			w.log.Info("deadline extended", "job", d.JobID, "attempt", d.Attempt, "timeout_ms", d.TimeoutMS)
			t.extendDeadline(time.Duration(d.TimeoutMS) * time.Millisecond)
		}
	}
	for _, a := range resp.Revoked {
		if t := w.heldTask(a); t != nil {
			w.logRevoked(t)
			t.revoke()
			w.forget(t)
		}
	}
}

// logRevoked says why the server no longer holds an attempt for this
// worker. Most often the attempt has ended and its completion is on its
// way: a heartbeat sent before the completion was acknowledged is
// answered after the server recorded it, which is news to no one (debug).
// A running attempt revoked is news (info): the worker stops it.
func (w *Worker) logRevoked(t *task) {
	w.mu.Lock()
	reported := t.reporting
	var outcome string
	if reported { // t.completion was set before reporting, under w.mu
		outcome = t.completion.Outcome
	}
	w.mu.Unlock()
	if !reported {
		w.log.Info("lease revoked: stopping the attempt", "job", t.key.jobID, "attempt", t.key.attempt)
		return
	}
	w.log.Debug("attempt ended on the server; its result was already sent", "job", t.key.jobID, "attempt", t.key.attempt, "outcome", outcome)
}

func (w *Worker) heldTask(a api.JobAttempt) *task {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held[taskKey{jobID: a.JobID, attempt: a.Attempt}]
}
