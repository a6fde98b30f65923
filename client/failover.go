package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// endpoints are the instances a Client was given and the one it uses.
//
// Several instances of a server share one PostgreSQL database; one leads
// and the others are standbys that answer 503 not_leader naming the leader
// in X-Fairway-Leader. A call that meets a standby, or an instance it
// cannot connect to, is sent again: to the leader named, else to the next
// instance. Only those two failures are retried, because in neither did
// any instance act on the request (a standby changes nothing; a refused
// connection carried nothing), so a submit is never applied twice.
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
		e.cur = scheme + "://" + leader
		return
	}
	for i, r := range e.roots {
		if r == root {
			e.cur = e.roots[(i+1)%len(e.roots)]
			return
		}
	}
	e.cur = e.roots[0]
}

// failoverWindow bounds how long a call keeps looking for the leader: a
// little more than an election takes (the leader's lease, 2 s by default,
// and a campaign interval).
const failoverWindow = 15 * time.Second

// withFailover runs one call against the instance in use and, while it
// meets a standby or (with several instances given) cannot connect, again
// against the leader or the next instance, pausing after each round of
// them, for up to failoverWindow.
func (c *Client) withFailover(ctx context.Context, call func(root string) (int, string, error)) (int, error) {
	deadline := time.Now().Add(failoverWindow)
	var answered error // the last standby's answer, kept if ctx ends during the next call
	for tries := 1; ; tries++ {
		root := c.ends.current()
		status, leader, err := call(root)
		if ctx.Err() != nil && answered != nil && !c.retryable(err) {
			return status, fmt.Errorf("%w; before that: %w", err, answered)
		}
		if !c.retryable(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return status, err
		}
		answered = err
		c.ends.moveOn(root, leader)
		if tries%len(c.ends.roots) == 0 { // a round of the instances: pause
			select {
			case <-ctx.Done():
				return status, err
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// retryable: a standby's answer, or (with several instances) a refused
// connection.
func (c *Client) retryable(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae.Code == api.CodeNotLeader
	}
	var op *net.OpError
	return len(c.ends.roots) > 1 && errors.As(err, &op) && op.Op == "dial"
}
