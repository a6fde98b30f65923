package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Submit tokens (store doc.go, "Submit tokens"). A submit may carry a
// token, 128 random bits its client drew, so that it can be sent again
// when its answer was lost: the dispatcher answers a submit whose
// (tenant, token) it has seen within store.SubmitTokenWindow with the
// jobs that first submit made, deduplicated, and inserts nothing.
//
// The tokens are kept here, in memory, and in each job's spec, where no
// index holds them: a token costs the job a column, not a row, an index
// entry or a read before the insert as an idempotency key does. The
// dispatcher learns a token when it applies the submit, before the batch
// is durable, so a copy that arrives while the first is still in flight
// (a batch later, or the same one) finds it; the copy's answer waits for
// its own batch, which is durable after the first's. A failed batch
// rebuilds the dispatcher, and rebuild reads the tokens back from the
// jobs created in the window (SubmitTokens from IDFloor(now − window −
// tokenSkew)), so a token is known exactly when its jobs are committed,
// on this instance and on the one that leads after it.
//
// The window is short: a token only guards its client's own retries of
// one call, and the Go client stops sending a call again
// client.SubmitTokenResendLimit after its first attempt, well inside it.
// Memory is one map entry per submit (not per job) of the last window:
// about 200 bytes each with its job's id (measured: 174 without the id),
// 120 MB for 5,000 submits a second over 2 minutes.

// tokenSkew widens the window that rebuild reads back, for a leader whose
// clock is behind the one that made the ids.
const tokenSkew = time.Minute

// tokenKey is a tenant's token, decoded.
type tokenKey struct {
	tenant string
	token  [16]byte
}

// tokenRec is what a token answers: the ids of its submit's jobs, in
// order, and when the submit was applied (its jobs' creation time).
type tokenRec struct {
	key tokenKey
	ids []string
	at  time.Time
}

// submitTokens are the tokens of the last window, by key and in the order
// they were learned, oldest first, so that expiry pops the front.
type submitTokens struct {
	byKey map[tokenKey]*tokenRec
	order []*tokenRec
	head  int
}

// parseToken is tenant's submit token s, decoded (store.ParseSubmitToken).
func parseToken(tenant, s string) (tokenKey, error) {
	token, ok := store.ParseSubmitToken(s)
	if !ok {
		return tokenKey{}, badField("submit_token", "must be 32 hexadecimal characters (128 random bits), got %d characters", len(s))
	}
	return tokenKey{tenant: tenant, token: token}, nil
}

// get returns the submit of k, if it was learned within the window.
func (t *submitTokens) get(k tokenKey, now time.Time) (*tokenRec, bool) {
	r, ok := t.byKey[k]
	if !ok || !r.at.After(now.Add(-store.SubmitTokenWindow)) {
		return nil, false
	}
	return r, true
}

// add learns k for the jobs ids (replacing a record of k that left the
// window), and forgets the tokens that left the window.
func (t *submitTokens) add(k tokenKey, ids []string, at time.Time) {
	t.expire(at)
	r := &tokenRec{key: k, ids: ids, at: at}
	if t.byKey == nil {
		t.byKey = map[tokenKey]*tokenRec{}
	}
	t.byKey[k] = r
	t.order = append(t.order, r)
}

// expire forgets the tokens learned at or before now − window.
func (t *submitTokens) expire(now time.Time) {
	edge := now.Add(-store.SubmitTokenWindow)
	for t.head < len(t.order) && !t.order[t.head].at.After(edge) {
		r := t.order[t.head]
		if t.byKey[r.key] == r {
			delete(t.byKey, r.key)
		}
		t.order[t.head] = nil
		t.head++
	}
	if t.head > 1024 && t.head > len(t.order)/2 {
		t.order = append(t.order[:0:0], t.order[t.head:]...)
		t.head = 0
	}
}

// loadTokens reads back the tokens of the jobs created within the window
// (and tokenSkew before it), at rebuild.
func (d *Dispatcher) loadTokens(ctx context.Context, now time.Time) error {
	d.tokens = submitTokens{}
	got, err := d.st.SubmitTokens(ctx, store.IDFloor(now.Add(-store.SubmitTokenWindow-tokenSkew)))
	if err != nil {
		return err
	}
	// A submit's first job holds its token, its i-th job "token:i"
	// (storedTokens), so that the jobs group by submit whatever their
	// tenants: the token is keyed by the first job's tenant, as tokenOf
	// keys it. A submit's jobs follow each other in id order.
	first := map[string]*tokenRec{}
	for _, st := range got {
		if base, _, later := strings.Cut(st.Token, ":"); later {
			if r := first[base]; r != nil {
				r.ids = append(r.ids, st.JobID)
			}
			continue
		}
		k, err := parseToken(st.Tenant, st.Token)
		if err != nil {
			continue // not one this dispatcher wrote
		}
		d.tokens.add(k, []string{st.JobID}, st.CreatedAt)
		first[st.Token] = d.tokens.byKey[k]
	}
	return nil
}

// storedTokens sets what each job of a submit with a token stores: the
// first job the token, the i-th "token:i" (rebuild groups them by it).
// It writes into a copy of jobs when there is more than one.
func storedTokens(jobs []store.Job) []store.Job {
	if len(jobs) < 2 || jobs[0].SubmitToken == "" {
		return jobs
	}
	out := slices.Clone(jobs)
	for i := 1; i < len(out); i++ {
		out[i].SubmitToken = jobs[0].SubmitToken + ":" + strconv.Itoa(i)
	}
	return out
}

// tokenOf returns the submit token the jobs carry (every job of a submit
// carries its token) and whether there is one.
func tokenOf(jobs []store.Job) (tokenKey, bool, error) {
	if len(jobs) == 0 || jobs[0].SubmitToken == "" {
		return tokenKey{}, false, nil
	}
	k, err := parseToken(jobs[0].Tenant, jobs[0].SubmitToken)
	return k, err == nil, err
}

// resubmitted answers a submit sent again with the token of r: the jobs
// of the first submit, as they are now, deduplicated.
func (d *Dispatcher) resubmitted(tx *txn, jobs []store.Job, r *tokenRec, actor string) []submitted {
	out := make([]submitted, len(jobs))
	if len(jobs) != len(r.ids) {
		return failAll(out, badField("submit_token", "was sent with a submit of %d jobs within the last %s; this one has %d: "+
			"a submit sent again must be the same request (draw a new token for a new submit)", len(r.ids), store.SubmitTokenWindow, len(jobs)))
	}
	if actor == "" {
		actor = "tenant:" + jobs[0].Tenant
	}
	for i, id := range r.ids {
		orig, err := d.currentJob(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return failAll(out, badField("submit_token", "was sent with a submit whose job %s no longer exists", id))
		}
		if err != nil {
			tx.fatal(fmt.Errorf("read the job of a submit token: %w", err))
			return out
		}
		tx.event(orig.ID, orig.Attempt, orig.Tenant, store.EventDeduplicated, actor, map[string]string{"submit_token": jobs[i].SubmitToken})
		out[i] = submitted{job: &orig, deduplicated: true}
	}
	return out
}

// learnToken records the token of a submit whose jobs are all in.
func (d *Dispatcher) learnToken(tx *txn, k tokenKey, out []submitted) {
	ids := make([]string, len(out))
	for i, s := range out {
		if s.err != nil || s.job == nil {
			return
		}
		ids[i] = s.job.ID
	}
	d.tokens.add(k, ids, tx.now)
}
