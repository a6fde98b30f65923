package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// poachingStore claims, once, the idempotency key of the first job
// inserted with JobInsertFreeKey for another job, in the same
// transaction, just before that insert: the key the dispatcher read as
// free is held at the commit, as when another instance (a leader about
// to be fenced) claimed it between the batch's read and its commit.
type poachingStore struct {
	store.Store
	poached atomic.Bool
}

type poachingWriter struct {
	store.Writer
	s *poachingStore
}

func (w poachingWriter) JobInsertFreeKey(ctx context.Context, j store.Job) error {
	if j.IdempotencyKey != "" && w.s.poached.CompareAndSwap(false, true) {
		other := j
		other.ID = store.NewID(j.CreatedAt)
		if err := w.Writer.JobInsert(ctx, other); err != nil {
			return err
		}
	}
	return w.Writer.JobInsertFreeKey(ctx, j)
}

func (s *poachingStore) Write(ctx context.Context, fn func(w store.Writer) error) error {
	return s.Store.Write(ctx, func(w store.Writer) error { return fn(poachingWriter{w, s}) })
}

func (s *poachingStore) WriteDeferred(ctx context.Context, fn func(w store.Writer) error) (<-chan error, error) {
	return s.Store.WriteDeferred(ctx, func(w store.Writer) error { return fn(poachingWriter{w, s}) })
}

// A keyed submit whose key, found free, is held at the commit changed
// nothing and may be retried: 503 unavailable with Retry-After, not a 500.
// The retry is answered as usual.
func TestKeyHeldAtCommitIsRetryable(t *testing.T) {
	var st *poachingStore
	h, _ := startWrapped(t, func(sq *sqlite.Store) store.Store { st = &poachingStore{Store: sq}; return st })

	spec := api.JobSpec{Type: "t", IdempotencyKey: "order-1"}
	body, _ := json.Marshal(spec)
	resp, err := http.Post(h.http.URL+"/api/v1/jobs", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var e api.ErrorResponse
	err = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !st.poached.Load() {
		t.Fatal("the submit never reached JobInsertFreeKey")
	}
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != api.CodeServerUnavailable ||
		resp.Header.Get("Retry-After") == "" {
		t.Fatalf("key held at the commit: HTTP %d %q (Retry-After %q): %s; want 503 %q with Retry-After",
			resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After"), e.Error.Message, api.CodeServerUnavailable)
	}
	var r api.SubmitResponse
	waitCond(t, "the retry accepted", func() bool {
		code := h.do("POST", "/jobs", spec, &r)
		return code == http.StatusCreated
	})
	if r.Job.IdempotencyKey != "order-1" || r.Deduplicated {
		t.Fatalf("the retry: %+v", r)
	}
}
