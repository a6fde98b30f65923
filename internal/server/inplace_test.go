package server

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// holdersStore counts the reads of idempotency key holders; it passes
// the SQLite store's queueing and in-place claims through.
type holdersStore struct {
	*sqlite.Store
	reads atomic.Int64
}

func (s *holdersStore) IdempotencyHolders(ctx context.Context, claims []store.Claim, createdAfter time.Time) (map[store.Claim]string, error) {
	s.reads.Add(1)
	return s.Store.IdempotencyHolders(ctx, claims, createdAfter)
}

// On an idle SQLite server a one-job keyed submit has its key claimed in
// place (claims.go): the claim statement finds a held key, so no read of
// the holders comes first. The answers are those of the deferred path:
// 201 and a new job, 200 and the original (also a finished one). A
// submit that meets a housekeeping batch still in flight takes the
// deferred path and reads; of 20 sequential submits at most a few may.
func TestIdleKeyedSubmitsClaimInPlace(t *testing.T) {
	var st *holdersStore
	h, _ := startWrapped(t, func(sq *sqlite.Store) store.Store { st = &holdersStore{Store: sq}; return st })

	submit := func(key string, wantCode int) api.SubmitResponse {
		t.Helper()
		var r api.SubmitResponse
		if code := h.do("POST", "/jobs", api.JobSpec{Type: "echo", IdempotencyKey: key}, &r); code != wantCode {
			t.Fatalf("submit %s: HTTP %d, want %d", key, code, wantCode)
		}
		return r
	}
	const n = 20
	for i := range n {
		submit(fmt.Sprintf("k%d", i), http.StatusCreated)
	}
	if reads := st.reads.Load(); reads > 3 {
		t.Fatalf("%d of %d keyed submits read their key's holders before the batch, want at most 3", reads, n)
	}
	first := submit("k-dup", http.StatusCreated)
	if again := submit("k-dup", http.StatusOK); again.Job.ID != first.Job.ID || !again.Deduplicated {
		t.Fatalf("second submit of k-dup: %s dedup=%v, want %s deduplicated", again.Job.ID, again.Deduplicated, first.Job.ID)
	}
	if code := h.do("POST", "/jobs/"+first.Job.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	if again := submit("k-dup", http.StatusOK); again.Job.ID != first.Job.ID || again.Job.State != "cancelled" || !again.Deduplicated {
		t.Fatalf("k-dup after its job ended: %s %s, want %s cancelled", again.Job.ID, again.Job.State, first.Job.ID)
	}
	var list api.JobList
	h.do("GET", "/jobs?limit=100", nil, &list)
	if len(list.Jobs) != n+1 {
		t.Fatalf("%d jobs stored, want %d", len(list.Jobs), n+1)
	}
}
