package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// LogOptions selects log chunks. Zero values are left out.
//
// Chunks are ordered by (attempt, seq): seq grows within an attempt. With
// Attempt set, only that attempt is read, after AfterSeq. With Attempt 0
// every attempt is read, after the position (AfterAttempt, AfterSeq).
type LogOptions struct {
	Attempt      int    // 0: every attempt
	Stream       string // "stdout" or "stderr"; "": both
	AfterAttempt int    // with AfterSeq: resume after this chunk (Attempt 0 only)
	AfterSeq     int64  // only chunks past this seq
	Limit        int    // at most this many chunks (a page; Logs only)
	// Grep, with Logs, asks for the lines that contain it instead of the
	// chunks: each matching line comes as a chunk of its own, all of them
	// in one answer (up to 10,000).
	Grep string
}

func (o LogOptions) query() url.Values {
	q := url.Values{}
	setInt(q, "attempt", int64(o.Attempt))
	setIf(q, "stream", o.Stream)
	setInt(q, "after_attempt", int64(o.AfterAttempt))
	setInt(q, "after_seq", o.AfterSeq)
	setInt(q, "limit", int64(o.Limit))
	setIf(q, "q", o.Grep)
	return q
}

// Logs returns one page of a job's log chunks in (attempt, seq) order. To
// read them all, call again with AfterAttempt and AfterSeq set to the last
// chunk's Attempt and Seq until a page comes back empty.
func (c *Client) Logs(ctx context.Context, id string, opts LogOptions) (api.LogList, error) {
	var out api.LogList
	_, err := c.do(ctx, call{method: http.MethodGet, path: jobPath(id, "/logs"), query: opts.query(), out: &out})
	return out, wrap("logs of job "+id, err)
}

// LogsAll calls fn for every chunk the job has logged so far, in order,
// from the position in opts. It reads the job once to learn its attempts,
// then each attempt page by page (attempt and after_seq), so it needs
// nothing of the server but the paging of one attempt. It stops at the
// first error of fn and returns it.
func (c *Client) LogsAll(ctx context.Context, id string, opts LogOptions, fn func(api.LogChunk) error) error {
	if opts.Attempt > 0 {
		return c.attemptLogs(ctx, id, opts, fn)
	}
	r, err := c.Get(ctx, id)
	if err != nil {
		return err
	}
	for a := max(opts.AfterAttempt, 1); a <= r.Job.Attempt; a++ {
		o := opts
		o.Attempt, o.AfterAttempt = a, 0
		if a != opts.AfterAttempt {
			o.AfterSeq = 0
		}
		if err := c.attemptLogs(ctx, id, o, fn); err != nil {
			return err
		}
	}
	return nil
}

// attemptLogs pages through one attempt's chunks until a page brings
// nothing new.
func (c *Client) attemptLogs(ctx context.Context, id string, opts LogOptions, fn func(api.LogChunk) error) error {
	pos := startPos(opts)
	for {
		page, err := c.Logs(ctx, id, opts)
		if err != nil {
			return err
		}
		progress := false
		for i := range page.Chunks {
			ch := &page.Chunks[i]
			if pos.covers(ch) {
				continue
			}
			pos, progress = logPos{ch.Attempt, ch.Seq, true}, true
			if err := fn(*ch); err != nil {
				return err
			}
		}
		if !progress {
			return nil
		}
		opts.AfterSeq = pos.seq
	}
}

// Reconnection of a followed stream: a stream that ends cleanly without its
// end event is reopened at once; failed reopenings back off from
// followRetryFirst, doubling to followRetryMax, and FollowLogs gives up
// after followMaxFailures of them in a row (about half a minute).
const (
	followRetryFirst  = 100 * time.Millisecond
	followRetryMax    = 3 * time.Second
	followMaxFailures = 14
)

// FollowLogs streams a job's log chunks as the server writes them
// (Server-Sent Events from GET /jobs/{id}/logs?follow=true), calling fn for
// each in order, and returns the end event's data once the job is terminal
// and its logs are drained. opts.Limit is ignored.
//
// If the connection drops after the stream was opened, FollowLogs
// reconnects from the last chunk it delivered (after_attempt, after_seq)
// and skips any chunk at or before it, so no chunk is lost or repeated. An
// error from fn stops it and is returned as is; so is ctx's error. A
// server that answers without an event stream gives ErrNoEventStream.
func (c *Client) FollowLogs(ctx context.Context, id string, opts LogOptions, fn func(api.LogChunk) error) (api.LogEnd, error) {
	f := follower{c: c, id: id, opts: opts, fn: fn, pos: startPos(opts)}
	end, err := f.run(ctx)
	var ce callbackError
	if errors.As(err, &ce) {
		return end, ce.err
	}
	if err != nil {
		return end, fmt.Errorf("follow logs of job %s: %w", id, err)
	}
	return end, nil
}

// callbackError carries an error of the caller's fn, to tell it apart.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// logPos is a position in a job's log: chunks at or before it are behind.
type logPos struct {
	attempt int
	seq     int64
	set     bool
}

func startPos(o LogOptions) logPos {
	if o.Attempt > 0 {
		return logPos{o.Attempt, o.AfterSeq, o.AfterSeq != 0}
	}
	return logPos{o.AfterAttempt, o.AfterSeq, o.AfterAttempt != 0 || o.AfterSeq != 0}
}

func (p logPos) covers(ch *api.LogChunk) bool {
	return p.set && (ch.Attempt < p.attempt || ch.Attempt == p.attempt && ch.Seq <= p.seq)
}

// follower is one FollowLogs call: its position and its reconnections.
type follower struct {
	c        *Client
	id       string
	opts     LogOptions
	fn       func(api.LogChunk) error
	pos      logPos
	opened   bool // a stream was opened once: drops are retried
	failures int  // reconnections in a row without progress
}

func (f *follower) run(ctx context.Context) (api.LogEnd, error) {
	for {
		end, done, err := f.stream(ctx)
		if done {
			return end, err
		}
		if ctx.Err() != nil {
			return end, ctx.Err()
		}
		if !f.opened || !IsRetryable(err) {
			return end, err
		}
		if err := f.backoff(ctx, err); err != nil {
			return end, err
		}
	}
}

// backoff waits before a reconnection: not at all after the first drop,
// then longer after each failure in a row.
func (f *follower) backoff(ctx context.Context, cause error) error {
	f.failures++
	switch {
	case f.failures == 1:
		return nil
	case f.failures > followMaxFailures:
		return fmt.Errorf("giving up after %d reconnections: %w", f.failures-1, cause)
	}
	d := followRetryFirst << min(f.failures-2, 5)
	return sleep(ctx, min(d, followRetryMax))
}

// streamIdle is how long a followed stream may stay silent before it is
// taken for dropped and reopened (elsewhere, if its instance is gone): the
// server sends a comment every 15 s.
var streamIdle = 45 * time.Second

// idleBody is a stream's body: it cancels the stream's request when
// closed, and, once watched, closes itself after a silence of the idle
// bound (a host that went silent: no FIN, no RST), so that the read
// fails as a dropped stream instead of waiting for ever.
type idleBody struct {
	io.ReadCloser
	cancel context.CancelFunc
	timer  *time.Timer
	idle   time.Duration
	silent atomic.Bool
}

func (b *idleBody) watch(idle time.Duration) {
	b.idle = idle
	b.timer = time.AfterFunc(idle, func() {
		b.silent.Store(true)
		b.cancel()
		_ = b.ReadCloser.Close()
	})
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.timer != nil {
		b.timer.Reset(b.idle)
	}
	if err != nil && b.silent.Load() {
		return n, fmt.Errorf("%w: nothing for %s", errStreamDropped, b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// stream opens the stream once and reads it. done says the outcome is
// final (the end event, an error of fn, ctx); otherwise err says why the
// stream ended.
func (f *follower) stream(ctx context.Context) (api.LogEnd, bool, error) {
	resp, err := f.open(ctx)
	if err != nil {
		return api.LogEnd{}, false, err
	}
	defer resp.Body.Close()
	f.opened = true
	opened := time.Now()
	var end api.LogEnd
	ended := false
	body := resp.Body.(*idleBody)
	body.watch(streamIdle)
	err = readEvents(body, func(ev sseEvent) error {
		switch ev.name {
		case "log":
			return f.chunk(ev.data)
		case "end":
			ended = true
			if err := json.Unmarshal(ev.data, &end); err != nil {
				return fmt.Errorf("decode end event: %w", err)
			}
			return errStop
		}
		return nil
	})
	if time.Since(opened) >= followRetryMax {
		f.failures = 0 // a long-lived stream is progress too
	}
	var ce callbackError
	switch {
	case ended || errors.As(err, &ce):
		return end, true, err
	case ctx.Err() != nil:
		return end, true, ctx.Err()
	case err == nil:
		err = errStreamDropped
	}
	return end, false, err
}

func (f *follower) open(ctx context.Context) (*http.Response, error) {
	q := f.opts.query()
	q.Del("limit")
	if f.pos.set {
		q.Set("after_seq", strconv.FormatInt(f.pos.seq, 10))
		if f.opts.Attempt == 0 {
			q.Set("after_attempt", strconv.Itoa(f.pos.attempt))
		}
	}
	q.Set("follow", "true")
	var resp *http.Response
	_, err := f.c.withFailover(ctx, retryPolicy{safe: true}, func(root string) (int, string, error) {
		// The answer's headers are due within the request timeout; the
		// stream itself then lasts as long as the job (streamIdle guards it).
		sctx, cancel := context.WithCancel(ctx)
		req, err := f.c.newRequest(sctx, http.MethodGet, root+"/api/v1"+jobPath(f.id, "/logs"), q, nil)
		if err != nil {
			cancel()
			return 0, "", err
		}
		req.Header.Set("Accept", "text/event-stream")
		var late *time.Timer
		if f.c.requestTimeout > 0 {
			late = time.AfterFunc(f.c.requestTimeout, cancel)
		}
		r, err := f.c.hc.Do(req)
		if late != nil && !late.Stop() && err != nil && ctx.Err() == nil {
			cancel()
			return 0, "", fmt.Errorf("%w (%s from %s)", ErrRequestTimeout, f.c.requestTimeout, root)
		}
		if err != nil {
			cancel()
			return 0, "", err
		}
		if r.StatusCode < 200 || r.StatusCode > 299 {
			defer cancel()
			defer r.Body.Close()
			return r.StatusCode, r.Header.Get("X-Fairway-Leader"), decodeError(r)
		}
		r.Body = &idleBody{ReadCloser: r.Body, cancel: cancel}
		resp = r
		return r.StatusCode, "", nil
	})
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, ErrNoEventStream
	}
	return resp, nil
}

// chunk hands one log event to fn and moves the position past it.
func (f *follower) chunk(data []byte) error {
	var ch api.LogChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return fmt.Errorf("decode log event: %w", err)
	}
	if f.pos.covers(&ch) {
		return nil // sent again after a reconnection
	}
	f.pos, f.failures = logPos{ch.Attempt, ch.Seq, true}, 0
	if err := f.fn(ch); err != nil {
		return callbackError{err}
	}
	return nil
}
