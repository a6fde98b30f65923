package server

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// askStore counts the keyed inserts whose Write asks the store for an
// answer (JobInsert, JobInsertBatched): such a Write cannot be deferred
// (package queued). It passes the SQLite store's queueing through, but
// not its in-place claims: the dispatcher takes the deferred path, which
// it takes on SQLite whenever a Write is in flight, for every submit
// (an idle one claims in place: TestIdleKeyedSubmitsClaimInPlace).
type askStore struct {
	*sqlite.Store
	mu    sync.Mutex
	asked int
}

func (s *askStore) ClaimsInPlace() bool { return false }

func (s *askStore) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	return s.Store.WriteDeferred(ctx, func(w store.Writer) error { return fn(&askWriter{Writer: w, s: s}) })
}

func (s *askStore) askedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked
}

type askWriter struct {
	store.Writer
	s *askStore
}

func (w *askWriter) note(j store.Job) {
	if j.IdempotencyKey != "" {
		w.s.mu.Lock()
		w.s.asked++
		w.s.mu.Unlock()
	}
}

func (w *askWriter) JobInsert(ctx context.Context, j store.Job) error {
	w.note(j)
	return w.Writer.JobInsert(ctx, j)
}

func (w *askWriter) JobInsertBatched(ctx context.Context, j store.Job) error {
	w.note(j)
	return w.Writer.JobInsertBatched(ctx, j)
}

// Keyed submits stay on the deferred path (store doc.go, "Keyed inserts
// on the deferred path"): the dispatcher answers duplicates itself (a key
// of the same request, of a batch not yet durable, of a finished job read
// from the store) and never asks the store for a keyed insert's answer;
// the answers are those of before: 201 and a new job, or 200 and the
// original, deduplicated.
func TestKeyedSubmitsAreDeferred(t *testing.T) {
	var st *askStore
	h, _ := startWrapped(t, func(sq *sqlite.Store) store.Store { st = &askStore{Store: sq}; return st })

	submit := func(key string, wantCode int) api.SubmitResponse {
		t.Helper()
		var r api.SubmitResponse
		if code := h.do("POST", "/jobs", api.JobSpec{Type: "echo", IdempotencyKey: key}, &r); code != wantCode {
			t.Fatalf("submit %s: HTTP %d, want %d", key, code, wantCode)
		}
		return r
	}
	first := submit("k1", http.StatusCreated)
	if again := submit("k1", http.StatusOK); again.Job.ID != first.Job.ID || !again.Deduplicated {
		t.Fatalf("second submit of k1: %s dedup=%v, want %s deduplicated", again.Job.ID, again.Deduplicated, first.Job.ID)
	}
	var batch api.BatchResponse
	specs := []api.JobSpec{{Type: "echo", IdempotencyKey: "k2"}, {Type: "echo", IdempotencyKey: "k2"},
		{Type: "echo", IdempotencyKey: "k1"}, {Type: "echo", IdempotencyKey: "k3"}}
	if code := h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: specs}, &batch); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("batch: HTTP %d", code)
	}
	got := batch.Jobs
	if len(got) != 4 || got[0].Deduplicated || !got[1].Deduplicated || got[1].Job.ID != got[0].Job.ID ||
		!got[2].Deduplicated || got[2].Job.ID != first.Job.ID || got[3].Deduplicated {
		t.Fatalf("batch answers: %+v", got)
	}
	// A finished job's key: its holder is read from the store.
	if code := h.do("POST", "/jobs/"+first.Job.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	if again := submit("k1", http.StatusOK); again.Job.ID != first.Job.ID || again.Job.State != "cancelled" {
		t.Fatalf("k1 after its job ended: %s %s, want %s cancelled", again.Job.ID, again.Job.State, first.Job.ID)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 3 {
		t.Fatalf("%d jobs stored, want 3 (k1, k2, k3)", len(list.Jobs))
	}
	if n := st.askedCount(); n != 0 {
		t.Fatalf("%d keyed inserts asked the store for their answer (a direct Write each), want 0", n)
	}
}
