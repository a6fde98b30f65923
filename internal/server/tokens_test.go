package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/store"
)

// postWithToken sends body to path with a submit token and decodes the
// answer into out; it returns the HTTP status.
func (h *harness) postWithToken(path, token string, body, out any) int {
	h.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", h.http.URL+"/api/v1"+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.SubmitTokenHeader, token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, out); err != nil {
		h.t.Fatalf("POST %s: decode %q: %v", path, raw, err)
	}
	return resp.StatusCode
}

// A submit sent again with its token is answered with the first one's
// jobs and creates none: at once, after a restart (the dispatcher reads
// the tokens back from the jobs), for a batch as for one job, per tenant;
// a token is forgotten store.SubmitTokenWindow after its submit; a token
// that is not 32 hexadecimal characters, or sent again with another
// number of jobs, is refused.
func TestSubmitTokensOnBothStores(t *testing.T) {
	const tok, batchTok = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	for name, open := range limitStores() {
		t.Run(name, func(t *testing.T) {
			connect := open(t)
			clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
			h := startOn(t, defaultConfig(), connect(), clock)
			spec := api.JobSpec{Type: "report", Tenant: "acme", Command: []string{"true"}}
			submit := func(token string, spec api.JobSpec) (int, api.SubmitResponse) {
				var r api.SubmitResponse
				return h.postWithToken("/jobs", token, spec, &r), r
			}
			code, first := submit(tok, spec)
			if code != http.StatusCreated || first.Deduplicated {
				t.Fatalf("first submit: HTTP %d %+v", code, first)
			}
			code, again := submit(tok, spec)
			if code != http.StatusOK || !again.Deduplicated || again.Job.ID != first.Job.ID {
				t.Fatalf("sent again: HTTP %d %+v, want 200 deduplicated %s", code, again, first.Job.ID)
			}
			code, other := submit(tok, api.JobSpec{Type: "report", Tenant: "globex", Command: []string{"true"}})
			if code != http.StatusCreated || other.Job.ID == first.Job.ID {
				t.Fatalf("another tenant's submit with the same token: HTTP %d %+v, want a new job", code, other)
			}
			batch := api.BatchRequest{Jobs: []api.JobSpec{spec, {Type: "report", Tenant: "globex", Command: []string{"true"}}}}
			var b1, b2 api.BatchResponse
			if code := h.postWithToken("/jobs/batch", batchTok, batch, &b1); code != http.StatusCreated || len(b1.Jobs) != 2 {
				t.Fatalf("batch: HTTP %d %+v", code, b1)
			}
			if code := h.postWithToken("/jobs/batch", batchTok, batch, &b2); code != http.StatusCreated || len(b2.Jobs) != 2 ||
				!b2.Jobs[0].Deduplicated || b2.Jobs[0].Job.ID != b1.Jobs[0].Job.ID || b2.Jobs[1].Job.ID != b1.Jobs[1].Job.ID {
				t.Fatalf("batch sent again: HTTP %d %+v, want %s and %s deduplicated", code, b2, b1.Jobs[0].Job.ID, b1.Jobs[1].Job.ID)
			}
			var bad api.ErrorResponse
			if code := h.postWithToken("/jobs/batch", batchTok, api.BatchRequest{Jobs: []api.JobSpec{spec}}, &bad); code != http.StatusBadRequest ||
				bad.Error.Field != "submit_token" {
				t.Fatalf("the batch's token with one job: HTTP %d %+v, want 400 on submit_token", code, bad)
			}
			if code := h.postWithToken("/jobs", "not-a-token", spec, &bad); code != http.StatusBadRequest || bad.Error.Field != api.SubmitTokenHeader {
				t.Fatalf("a malformed token: HTTP %d %+v, want 400 on %s", code, bad, api.SubmitTokenHeader)
			}
			var events api.EventList
			h.do("GET", "/jobs/"+first.Job.ID+"/events", nil, &events)
			if n := len(events.Events); n == 0 || events.Events[n-1].Type != string(store.EventDeduplicated) {
				t.Errorf("events of %s: %+v, want the copy recorded as deduplicated", first.Job.ID, events.Events)
			}

			h.stop()
			clock.Advance(store.SubmitTokenWindow - time.Second)
			h = startOn(t, defaultConfig(), connect(), clock)
			if code, r := submit(tok, spec); code != http.StatusOK || r.Job.ID != first.Job.ID {
				t.Fatalf("after a restart: HTTP %d %+v, want %s deduplicated", code, r, first.Job.ID)
			}
			var b3 api.BatchResponse
			if code := h.postWithToken("/jobs/batch", batchTok, batch, &b3); code != http.StatusCreated || len(b3.Jobs) != 2 ||
				b3.Jobs[1].Job.ID != b1.Jobs[1].Job.ID || !b3.Jobs[1].Deduplicated {
				t.Fatalf("the batch after a restart: HTTP %d %+v, want %s and %s deduplicated", code, b3, b1.Jobs[0].Job.ID, b1.Jobs[1].Job.ID)
			}

			clock.Advance(2 * time.Second)
			if code, r := submit(tok, spec); code != http.StatusCreated || r.Job.ID == first.Job.ID {
				t.Fatalf("past the window: HTTP %d %+v, want a new job", code, r)
			}
			h.stop()
			h = startOn(t, defaultConfig(), connect(), clock)
			if code, r := submit(batchTok, spec); code != http.StatusCreated {
				t.Fatalf("a restart past the window: HTTP %d %+v, want a new job", code, r)
			}
		})
	}
}

// The Go client's submit whose answer is lost after the server applied it
// (the connection drops before the answer) is sent again with its token
// and answered with the job it made: one job, on both stores.
func TestLostSubmitAnswerIsSentAgainWithItsToken(t *testing.T) {
	for name, open := range limitStores() {
		t.Run(name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
			h := startOn(t, defaultConfig(), open(t)(), clock)
			var posts atomic.Int32
			var tokens []string
			var mu sync.Mutex
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					h.srv.Handler().ServeHTTP(w, r)
					return
				}
				mu.Lock()
				tokens = append(tokens, r.Header.Get(api.SubmitTokenHeader))
				mu.Unlock()
				if posts.Add(1) == 1 {
					h.srv.Handler().ServeHTTP(httptest.NewRecorder(), r) // applied; its answer is lost
					panic(http.ErrAbortHandler)
				}
				h.srv.Handler().ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			c, err := client.New(front.URL, client.WithRetryDeadline(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Submit(context.Background(), api.JobSpec{Type: "report", Command: []string{"true"}})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Deduplicated || posts.Load() != 2 || tokens[0] == "" || tokens[0] != tokens[1] {
				t.Fatalf("answer %+v after %d posts with tokens %q, want the first post's job, deduplicated, after one resend of the same token",
					r, posts.Load(), tokens)
			}
			var list api.JobList
			h.do("GET", "/jobs", nil, &list)
			if len(list.Jobs) != 1 || list.Jobs[0].ID != r.Job.ID {
				t.Fatalf("jobs %+v, want only %s", list.Jobs, r.Job.ID)
			}
		})
	}
}
