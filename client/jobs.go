package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Submit submits one job. A duplicate idempotency key answers the original
// job with Deduplicated set; so does a spec whose unique rule
// (spec.Unique) matches a job, with UniqueMatch naming the rule. A spec
// without an idempotency key is sent with a submit token the client
// draws for the call (api.SubmitTokenHeader), so that a submit whose
// answer was lost can be sent again, for up to SubmitTokenResendLimit,
// without running the job twice (not with WithoutGeneratedKeys).
func (c *Client) Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error) {
	var out api.SubmitResponse
	k := call{method: http.MethodPost, path: "/jobs", in: &spec, out: &out, idemKey: spec.IdempotencyKey}
	if spec.IdempotencyKey == "" {
		k.submitToken = c.newSubmitToken()
	}
	_, err := c.do(ctx, k)
	return out, wrap("submit", err)
}

// SubmitWait submits one job as on-demand (POST /jobs?wait=true) and
// answers when it ends. timeout is the server-side wait (0: the server's
// default, 60 s); if it passes first, SubmitWait returns the job as it is
// together with ErrWaitTimeout, and Wait can take over. ctx bounds the
// whole call: give it a deadline longer than timeout.
func (c *Client) SubmitWait(ctx context.Context, spec api.JobSpec, timeout time.Duration) (api.Job, error) {
	q := url.Values{"wait": {"true"}}
	if timeout > 0 {
		q.Set("timeout_ms", strconv.FormatInt(timeout.Milliseconds(), 10))
	}
	var out api.SubmitResponse
	c.ensureKey(&spec)
	wait := timeout
	if wait <= 0 {
		wait = serverWaitDefault
	}
	status, err := c.do(ctx, call{method: http.MethodPost, path: "/jobs", query: q, in: &spec, out: &out,
		idemKey: spec.IdempotencyKey, wait: wait})
	if err != nil {
		return api.Job{}, wrap("submit and wait", err)
	}
	if status == http.StatusAccepted || !api.Terminal(out.Job.State) {
		return out.Job, fmt.Errorf("submit and wait: job %s is %s: %w", out.Job.ID, out.Job.State, ErrWaitTimeout)
	}
	return out.Job, nil
}

// SubmitBatch submits up to 1000 specs atomically: either all are
// committed or none (the error's Field names jobs[i].field). Like Submit,
// it sends the batch with a submit token, so that the batch may be sent
// again (not with WithoutGeneratedKeys: then a batch with an unkeyed
// spec is not sent again once its outcome is unknown).
func (c *Client) SubmitBatch(ctx context.Context, specs []api.JobSpec) (api.BatchResponse, error) {
	// The answer has a job per spec: sized once, the decoder fills it
	// instead of growing it from 10 elements by doubling.
	out := api.BatchResponse{Jobs: make([]api.SubmitResponse, 0, len(specs))}
	allKeyed := len(specs) > 0
	for i := range specs {
		allKeyed = allKeyed && specs[i].IdempotencyKey != ""
	}
	k := call{method: http.MethodPost, path: "/jobs/batch", in: &api.BatchRequest{Jobs: specs}, out: &out, idempotent: allKeyed}
	if !allKeyed {
		k.submitToken = c.newSubmitToken()
	}
	_, err := c.do(ctx, k)
	return out, wrap("submit batch", err)
}

// GeneratedKeyPrefix starts the idempotency keys the client makes up for
// SubmitWait's submits that have none.
const GeneratedKeyPrefix = "fwc-"

// SubmitTokenResendLimit is how long after its first attempt a submit
// sent with a token (Submit, SubmitBatch) may be sent again: past it the
// call returns its last error, whatever the retry deadline, since the
// server remembers a token for two minutes only (api.SubmitTokenHeader).
const SubmitTokenResendLimit = time.Minute

// newSubmitToken draws a submit token for one call ("" when the Client
// was made WithoutGeneratedKeys).
func (c *Client) newSubmitToken() string {
	if c.noKeys {
		return ""
	}
	return random128()
}

// random128 is 128 random bits in hexadecimal: a submit token, or the
// body of a made-up key.
func random128() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ensureKey gives spec a random idempotency key if it has none, unless
// the Client was made WithoutGeneratedKeys. SubmitWait's submits use it:
// they may wait for their job for longer than a submit token lasts.
func (c *Client) ensureKey(spec *api.JobSpec) {
	if spec.IdempotencyKey != "" || c.noKeys {
		return
	}
	spec.IdempotencyKey = GeneratedKeyPrefix + random128()
}

// Get returns one job with its latest execution.
func (c *Client) Get(ctx context.Context, id string) (api.JobResponse, error) {
	var out api.JobResponse
	_, err := c.do(ctx, call{method: http.MethodGet, path: jobPath(id, ""), out: &out})
	return out, wrap("get job "+id, err)
}

// ListOptions filters GET /jobs. Zero values are left out.
type ListOptions struct {
	States        []string // any of these states
	Type          string
	Lane          string
	Types         []string // any of these types (Type counts too)
	Lanes         []string // any of these lanes (Lane counts too)
	Tenant        string   // admin keys only
	Tag           string   // jobs that carry this tag
	ScheduleID    string   // the jobs of this schedule
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Limit         int    // 1..1000; 0: the server's default (100)
	Cursor        string // NextCursor of the previous page
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	for _, s := range o.States {
		q.Add("state", s)
	}
	setIf(q, "type", o.Type)
	setIf(q, "lane", o.Lane)
	for _, t := range o.Types {
		q.Add("type", t)
	}
	for _, l := range o.Lanes {
		q.Add("lane", l)
	}
	setIf(q, "tenant", o.Tenant)
	setIf(q, "tag", o.Tag)
	setIf(q, "schedule_id", o.ScheduleID)
	setTime(q, "created_after", o.CreatedAfter)
	setTime(q, "created_before", o.CreatedBefore)
	setInt(q, "limit", int64(o.Limit))
	setIf(q, "cursor", o.Cursor)
	return q
}

// List returns one page of jobs, newest first.
func (c *Client) List(ctx context.Context, opts ListOptions) (api.JobList, error) {
	var out api.JobList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/jobs", query: opts.query(), out: &out})
	return out, wrap("list jobs", err)
}

// ListAll calls fn for every job matching opts, following cursors from
// opts.Cursor to the last page. It stops at the first error of fn and
// returns it.
func (c *Client) ListAll(ctx context.Context, opts ListOptions, fn func(api.Job) error) error {
	for {
		page, err := c.List(ctx, opts)
		if err != nil {
			return err
		}
		for _, j := range page.Jobs {
			if err := fn(j); err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return nil
		}
		if page.NextCursor == opts.Cursor {
			return fmt.Errorf("list jobs: server repeated cursor %q", page.NextCursor)
		}
		opts.Cursor = page.NextCursor
	}
}

// Cancel cancels a job. Result says what happened: cancelled,
// cancel_requested (running: its worker is told at once and kills it) or
// already_finished.
func (c *Client) Cancel(ctx context.Context, id string) (api.ActionResponse, error) {
	var out api.ActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/cancel"), in: struct{}{}, out: &out})
	return out, wrap("cancel job "+id, err)
}

// Reprioritize sets a pending job's priority (0..1000). Result is
// reprioritized, already_running or already_finished.
func (c *Client) Reprioritize(ctx context.Context, id string, priority int) (api.ActionResponse, error) {
	var out api.ActionResponse
	in := api.ReprioritizeRequest{Priority: &priority}
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/reprioritize"), in: &in, out: &out})
	return out, wrap("reprioritize job "+id, err)
}

// Executions returns a job's attempts, oldest first.
func (c *Client) Executions(ctx context.Context, id string) ([]api.Execution, error) {
	var out api.ExecutionList
	_, err := c.do(ctx, call{method: http.MethodGet, path: jobPath(id, "/executions"), out: &out})
	return out.Executions, wrap("executions of job "+id, err)
}

// Events returns a job's audit trail.
func (c *Client) Events(ctx context.Context, id string) ([]api.Event, error) {
	var out api.EventList
	_, err := c.do(ctx, call{method: http.MethodGet, path: jobPath(id, "/events"), out: &out})
	return out.Events, wrap("events of job "+id, err)
}

// Explain says why a job is not running.
func (c *Client) Explain(ctx context.Context, id string) (api.Explanation, error) {
	var out api.Explanation
	_, err := c.do(ctx, call{method: http.MethodGet, path: jobPath(id, "/explain"), out: &out})
	return out, wrap("explain job "+id, err)
}

// ExtendSLA adds by (rounded down to milliseconds) to a job's timeout and
// expected time.
func (c *Client) ExtendSLA(ctx context.Context, id string, by time.Duration) (api.Job, error) {
	var out api.JobResponse
	in := api.ExtendSLARequest{ExtendMS: by.Milliseconds()}
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/extend-sla"), in: &in, out: &out})
	return out.Job, wrap("extend SLA of job "+id, err)
}

// Wait blocks until the job is terminal and returns it.
//
// It follows the job's log stream (GET /jobs/{id}/logs?follow=true)
// filtered to an attempt no job reaches, so no log data flows and the
// server's end event, sent once the job is terminal, wakes it at once; a
// dropped stream is reopened. Then it reads the job once. A server that
// refuses that stream (no event stream, or a 400) is polled instead (GET
// /jobs/{id}, every 50 ms growing to 2 s). ctx bounds the wait.
func (c *Client) Wait(ctx context.Context, id string) (api.Job, error) {
	_, err := c.FollowLogs(ctx, id, LogOptions{Attempt: noAttempt}, func(api.LogChunk) error { return nil })
	if e, ok := APIError(err); errors.Is(err, ErrNoEventStream) || ok && e.Status == http.StatusBadRequest {
		return c.pollUntilTerminal(ctx, id)
	}
	if err != nil {
		return api.Job{}, fmt.Errorf("wait for job %s: %w", id, err)
	}
	r, err := c.Get(ctx, id)
	return r.Job, err
}

// noAttempt is an attempt number no job reaches: its log is always empty.
const noAttempt = 1_000_000_000

const (
	pollFirst = 50 * time.Millisecond
	pollMax   = 2 * time.Second
)

func (c *Client) pollUntilTerminal(ctx context.Context, id string) (api.Job, error) {
	delay := pollFirst
	for {
		r, err := c.Get(ctx, id)
		if err != nil {
			return api.Job{}, fmt.Errorf("wait for job %s: %w", id, err)
		}
		if api.Terminal(r.Job.State) {
			return r.Job, nil
		}
		if err := sleep(ctx, delay); err != nil {
			return r.Job, fmt.Errorf("wait for job %s: %w", id, err)
		}
		delay = min(delay*3/2, pollMax)
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int64) {
	if v != 0 {
		q.Set(k, strconv.FormatInt(v, 10))
	}
}

func setTime(q url.Values, k string, t time.Time) {
	if !t.IsZero() {
		q.Set(k, formatTime(t))
	}
}

// Hold sets a job that has not started aside: it is never leased until
// Release. Result is held, already_held, already_running or
// already_finished.
func (c *Client) Hold(ctx context.Context, id string) (api.ActionResponse, error) {
	var out api.ActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/hold"), in: struct{}{}, out: &out})
	return out, wrap("hold job "+id, err)
}

// Release makes a held job runnable again. Result is released, not_held
// or already_finished.
func (c *Client) Release(ctx context.Context, id string) (api.ActionResponse, error) {
	var out api.ActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/release"), in: struct{}{}, out: &out})
	return out, wrap("release job "+id, err)
}

// Retry sends a failed or cancelled job back to the queue with one more
// attempt. Result is retried, or not_finished when the job has not ended
// (nothing changed); a job that succeeded is a conflict error.
func (c *Client) Retry(ctx context.Context, id string) (api.ActionResponse, error) {
	var out api.ActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: jobPath(id, "/retry"), in: struct{}{}, out: &out})
	return out, wrap("retry job "+id, err)
}

// RetryMany retries the failed or cancelled jobs req names or matches.
func (c *Client) RetryMany(ctx context.Context, req api.RetryRequest) (api.RetryResponse, error) {
	var out api.RetryResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/jobs/retry", in: req, out: &out})
	return out, wrap("retry jobs", err)
}
