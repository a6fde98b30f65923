package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// endpoints are the instances a Client was given and the one it uses.
//
// Several instances of a server share one PostgreSQL database; one leads
// and the others are standbys that forward requests to it, or answer 503
// not_leader naming the leader in X-Fairway-Leader when they cannot. A
// call that fails in a way another instance may not (see retryable) is
// sent again: to the leader named, else to the next instance.
type endpoints struct {
	mu    sync.Mutex
	roots []string // as given, normalized
	cur   string
}

func newEndpoints(baseURLs string) (*endpoints, error) {
	e := &endpoints{}
	for _, part := range strings.Split(baseURLs, ",") {
		root, err := normalizeBase(part)
		if err != nil {
			return nil, err
		}
		e.roots = append(e.roots, root)
	}
	e.cur = e.roots[0]
	return e, nil
}

func (e *endpoints) current() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// moveOn leaves root, which failed: to the leader it named, else to the
// next instance given. Another call may have moved already.
func (e *endpoints) moveOn(root, leader string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur != root {
		return
	}
	if leader != "" {
		scheme, _, _ := strings.Cut(root, "://")
		if named := scheme + "://" + leader; named != root {
			e.cur = named
			return
		}
	}
	for i, r := range e.roots {
		if r == root {
			e.cur = e.roots[(i+1)%len(e.roots)]
			return
		}
	}
	e.cur = e.roots[0]
}

// Timeouts and retries (doc.go, "Failover, timeouts and retries").
const (
	// DefaultRequestTimeout bounds one attempt of a call against one
	// instance: an instance that accepts the connection and then says
	// nothing (cut off from its database, or from the network) is left
	// after it. A long poll is bounded by its wait plus longPollMargin
	// instead.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultRetryDeadline bounds how long a call keeps trying instances:
	// a little more than an election and a leader's step-down take.
	DefaultRetryDeadline = 30 * time.Second
	// longPollMargin is added to a long poll's wait for the server to
	// answer once the wait has passed.
	longPollMargin = 5 * time.Second
	// serverWaitDefault is the server's default hold of a submit with
	// wait=true and no timeout (docs/api.md).
	serverWaitDefault = 60 * time.Second
	backoffMin        = 50 * time.Millisecond
	backoffMax        = 2 * time.Second
)

// ErrRequestTimeout is returned (wrapped) when an instance did not answer
// one attempt of a call within the request timeout (WithRequestTimeout)
// and no other instance could be tried; it is a network error
// (IsNetworkError, IsRetryable).
var ErrRequestTimeout = errors.New("client: no answer within the request timeout")

// WithRequestTimeout bounds each attempt of a call against one instance
// (default DefaultRequestTimeout); a long poll (Lease, HeartbeatWait,
// SubmitWait) is bounded by its wait plus 5 s (or d, if shorter). d <= 0: attempts are bounded only by
// the call's context. Streams (FollowLogs, Wait) are not bounded.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) { c.requestTimeout = d }
}

// WithRetryDeadline bounds how long a call keeps retrying and trying other
// instances (default DefaultRetryDeadline); the call's context may end it
// sooner. d <= 0: no retries, every call is tried once.
func WithRetryDeadline(d time.Duration) Option {
	return func(c *Client) { c.retryDeadline = d }
}

// withFailover runs one call against the instance in use and, while it
// fails in a way that allows it (retryable), again: against the leader a
// standby named, else the next instance, pausing with jittered,
// capped back-off after each round of the instances, until the retry
// deadline or ctx ends. safe says the call may be sent again after an
// instance may have acted on it (a read, or a submit with an idempotency
// key): only such calls are retried after a timeout, a dropped
// connection or a maybe_applied answer.
func (c *Client) withFailover(ctx context.Context, p retryPolicy, call func(root string) (int, string, error)) (int, error) {
	safe := p.safe
	deadline := time.Now().Add(c.retryDeadline)
	if p.resendLimit > 0 && c.retryDeadline > p.resendLimit {
		deadline = time.Now().Add(p.resendLimit)
	}
	var answered error // the last retried error, kept if ctx ends during the next call
	for tries := 1; ; tries++ {
		root := c.ends.current()
		status, leader, err := call(root)
		if ctx.Err() != nil && answered != nil && !c.retryable(err, safe) {
			return status, fmt.Errorf("%w; before that: %w", err, answered)
		}
		if !c.retryable(err, safe) || ctx.Err() != nil || !time.Now().Before(deadline) ||
			(p.snapshot && tries >= len(c.ends.roots)) {
			if ctx.Err() == nil && instanceTrouble(err) {
				c.ends.moveOn(root, leader) // the caller's own retry goes elsewhere
			}
			return status, err
		}
		answered = err
		c.ends.moveOn(root, leader)
		if len(c.ends.roots) > 1 && tries%len(c.ends.roots) != 0 && c.ends.current() != root {
			continue // another instance: try it at once
		}
		pause := min(backoff(tries/len(c.ends.roots)), time.Until(deadline))
		if pause > 0 && !sleepCtx(ctx, pause) {
			return status, err
		}
	}
}

// retryPolicy is how a call may be sent again.
type retryPolicy struct {
	// safe: it may be sent again after an instance may have acted on it.
	safe bool
	// snapshot: its body describes the caller's state when it was made
	// (a worker's heartbeat lists the attempts it holds then), so it is
	// tried on each instance at most once, without pausing, and never
	// after a timeout: a copy delivered late would tell the leader
	// something no longer true. The caller sends a fresh one.
	snapshot bool
	// resendLimit, if not 0, caps the retry deadline: a submit sent with
	// a token is not sent again once the server may have forgotten it.
	resendLimit time.Duration
}

// backoff is the pause after round n (1-based) of the instances:
// backoffMin·2ⁿ⁻¹ capped at backoffMax, jittered over its upper half.
func backoff(n int) time.Duration {
	d := backoffMin
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	return d/2 + rand.N(d/2+1)
}

// sleepCtx waits d or until ctx ends, reporting whether it waited it all.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryable says whether a failed attempt is tried again (elsewhere):
//   - a standby's not_leader, or unavailable (nothing was changed): always;
//   - a refused connection (nothing was sent): with several instances;
//   - maybe_applied, a proxy's 502/503/504, a timeout or a connection
//     that broke after the request went out: only safe calls.
//
// Other answers, overloaded and rate_limited included, are the caller's.
func (c *Client) retryable(err error, safe bool) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrNotFairway) {
		return len(c.ends.roots) > 1
	}
	var fa *foreignAnswer
	if errors.As(err, &fa) {
		switch fa.e.Status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return safe
		}
		return false
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case api.CodeNotLeader, api.CodeServerUnavailable:
			return true
		case api.CodeMaybeApplied, api.CodeDeadlineExceeded:
			return safe
		}
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return len(c.ends.roots) > 1
	}
	return safe && IsNetworkError(err)
}

// attemptTimeout is the bound of one attempt of k: the request timeout,
// or for a long poll its wait plus a margin (5 s, or the request timeout
// if shorter).
func (c *Client) attemptTimeout(k call) time.Duration {
	if c.requestTimeout <= 0 {
		return 0
	}
	if k.wait > 0 { // the server answers once the wait has passed, at the latest
		return k.wait + min(c.requestTimeout, longPollMargin)
	}
	return c.requestTimeout
}

// policyOf is k's retry policy.
func policyOf(k call) retryPolicy {
	p := retryPolicy{safe: safeToRepeat(k), snapshot: k.snapshot}
	if k.submitToken != "" {
		p.resendLimit = SubmitTokenResendLimit
	}
	return p
}

// safeToRepeat: a call that may be sent again after an instance may have
// acted on it.
func safeToRepeat(k call) bool {
	if k.snapshot {
		return false
	}
	switch k.method {
	case http.MethodGet, http.MethodHead, http.MethodPut:
		return true
	}
	return k.idemKey != "" || k.submitToken != "" || k.idempotent
}

// instanceTrouble: err says more about the instance than about the call
// (it did not answer, or cannot serve now), so that the next call had
// better go to another one.
func instanceTrouble(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case api.CodeNotLeader, api.CodeServerUnavailable, api.CodeMaybeApplied, api.CodeDeadlineExceeded:
			return true
		}
		return false
	}
	return IsNetworkError(err) || errors.Is(err, ErrNotFairway)
}
