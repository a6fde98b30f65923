package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func decodeSeen[T any](t *testing.T, s seen) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(s.Body, &v); err != nil {
		t.Fatalf("request body %q: %v", s.Body, err)
	}
	return v
}

func wantReq(t *testing.T, s seen, method, path string, query url.Values) {
	t.Helper()
	if s.Method != method || s.Path != path {
		t.Errorf("request %s %s, want %s %s", s.Method, s.Path, method, path)
	}
	if query == nil {
		query = url.Values{}
	}
	if diff := cmp.Diff(map[string][]string(query), s.Query); diff != "" {
		t.Errorf("query (-want +got)\n%s", diff)
	}
}

func TestSubmit(t *testing.T) {
	want := api.SubmitResponse{Job: job("j1", api.StatePending), EstimatedStart: &t0}
	c, f := newFake(t, reply(201, want))
	prio := 700
	spec := api.JobSpec{Type: "report", Tenant: "acme", Priority: &prio, Command: []string{"./r.sh", "a b"},
		Env: map[string]string{"K": "V"}, Payload: json.RawMessage(`{"x":1}`),
		DependsOn: []api.Dependency{{JobID: "j0", Condition: "any"}}}
	got, err := c.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got)\n%s", diff)
	}
	s := f.last(t)
	wantReq(t, s, "POST", "/api/v1/jobs", nil)
	sent := decodeSeen[api.JobSpec](t, s)
	if tok := s.Header.Get(api.SubmitTokenHeader); !isSubmitToken(tok) || s.Header.Get("X-Idempotency-Key") != tok {
		t.Errorf("a submit without a key was sent with token %q (X-Idempotency-Key %q), want one the client drew for it",
			tok, s.Header.Get("X-Idempotency-Key"))
	}
	if diff := cmp.Diff(spec, sent); diff != "" {
		t.Errorf("body (-want +got)\n%s", diff)
	}
}

func TestSubmitWait(t *testing.T) {
	t.Run("terminal", func(t *testing.T) {
		c, f := newFake(t, reply(200, api.SubmitResponse{Job: job("j1", api.StateSucceeded)}))
		got, err := c.SubmitWait(context.Background(), api.JobSpec{Type: "report"}, 1500*time.Millisecond)
		if err != nil || got.State != api.StateSucceeded {
			t.Fatalf("got %+v, %v", got, err)
		}
		wantReq(t, f.last(t), "POST", "/api/v1/jobs", url.Values{"wait": {"true"}, "timeout_ms": {"1500"}})
	})
	t.Run("server wait timeout", func(t *testing.T) {
		c, f := newFake(t, reply(202, api.SubmitResponse{Job: job("j1", api.StateRunning)}))
		got, err := c.SubmitWait(context.Background(), api.JobSpec{Type: "report"}, 0)
		if !errors.Is(err, ErrWaitTimeout) || got.ID != "j1" || got.State != api.StateRunning {
			t.Fatalf("got %+v, %v; want the running job and ErrWaitTimeout", got, err)
		}
		wantReq(t, f.last(t), "POST", "/api/v1/jobs", url.Values{"wait": {"true"}})
	})
}

func TestSubmitBatch(t *testing.T) {
	want := api.BatchResponse{Jobs: []api.SubmitResponse{{Job: job("a", api.StatePending)}, {Job: job("b", api.StatePending), Deduplicated: true}}}
	c, f := newFake(t, reply(201, want))
	specs := []api.JobSpec{{Type: "report"}, {Type: "report", IdempotencyKey: "k"}}
	got, err := c.SubmitBatch(context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantReq(t, f.last(t), "POST", "/api/v1/jobs/batch", nil)
	sent := decodeSeen[api.BatchRequest](t, f.last(t))
	if tok := f.last(t).Header.Get(api.SubmitTokenHeader); !isSubmitToken(tok) {
		t.Errorf("a batch with an unkeyed spec was sent with token %q, want one the client drew for it", tok)
	}
	if diff := cmp.Diff(api.BatchRequest{Jobs: specs}, sent); diff != "" {
		t.Errorf("body (-want +got)\n%s", diff)
	}
}

func TestBatchFieldError(t *testing.T) {
	c, _ := newFake(t, reply(400, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInvalidArgument, Message: "bad", Field: "jobs[3].priority"}}))
	_, err := c.SubmitBatch(context.Background(), []api.JobSpec{{Type: "x"}})
	if e, ok := APIError(err); !ok || e.Field != "jobs[3].priority" || e.Status != 400 {
		t.Errorf("error %v", err)
	}
}

func TestGetEscapesID(t *testing.T) {
	want := api.JobResponse{Job: job("a/b c", api.StateRunning), Execution: &api.Execution{JobID: "a/b c", Attempt: 1}}
	c, f := newFake(t, reply(200, want))
	got, err := c.Get(context.Background(), "a/b c")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantReq(t, f.last(t), "GET", "/api/v1/jobs/a%2Fb%20c", nil)
}

func TestGetNotFound(t *testing.T) {
	c, _ := newFake(t, apiError(404, api.CodeNotFound, "no job j9"))
	_, err := c.Get(context.Background(), "j9")
	if !IsNotFound(err) {
		t.Fatalf("want not found, got %v", err)
	}
	if want := "get job j9: not_found (404): no job j9"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func TestListQuery(t *testing.T) {
	want := api.JobList{Jobs: []api.Job{job("j2", api.StateFailed)}, NextCursor: "c2"}
	c, f := newFake(t, reply(200, want))
	got, err := c.List(context.Background(), ListOptions{
		States: []string{"failed", "cancelled"}, Type: "report", Lane: "batch", Tenant: "acme",
		CreatedAfter: t0, CreatedBefore: t0.Add(90 * time.Minute).In(time.FixedZone("x", 3600)), Limit: 10, Cursor: "c1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantReq(t, f.last(t), "GET", "/api/v1/jobs", url.Values{
		"state": {"failed", "cancelled"}, "type": {"report"}, "lane": {"batch"}, "tenant": {"acme"},
		"created_after": {"2026-11-21T06:00:00Z"}, "created_before": {"2026-11-21T07:30:00Z"},
		"limit": {"10"}, "cursor": {"c1"},
	})
}

// pages answers GET /jobs with one page per cursor.
func pages(p map[string]api.JobList) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, p[r.URL.Query().Get("cursor")])
	}
}

func TestListAllFollowsCursors(t *testing.T) {
	c, f := newFake(t, pages(map[string]api.JobList{
		"":   {Jobs: []api.Job{job("j5", "pending"), job("j4", "pending")}, NextCursor: "c1"},
		"c1": {Jobs: []api.Job{job("j3", "pending")}, NextCursor: "c2"},
		"c2": {Jobs: []api.Job{job("j2", "pending")}},
	}))
	var ids []string
	err := c.ListAll(context.Background(), ListOptions{Type: "report", Limit: 2}, func(j api.Job) error {
		ids = append(ids, j.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"j5", "j4", "j3", "j2"}, ids); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	reqs := f.all()
	if len(reqs) != 3 || reqs[2].Query["cursor"][0] != "c2" || reqs[2].Query["type"][0] != "report" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestListAllStops(t *testing.T) {
	c, _ := newFake(t, pages(map[string]api.JobList{
		"":   {Jobs: []api.Job{job("j1", "pending")}, NextCursor: "c1"},
		"c1": {Jobs: []api.Job{job("j2", "pending")}, NextCursor: "c1"},
	}))
	stop := errors.New("stop")
	err := c.ListAll(context.Background(), ListOptions{}, func(api.Job) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("fn error not returned: %v", err)
	}
	err = c.ListAll(context.Background(), ListOptions{}, func(api.Job) error { return nil })
	if err == nil {
		t.Error("a repeated cursor did not stop ListAll")
	}
}

func TestJobActions(t *testing.T) {
	ctx := context.Background()
	action := api.ActionResponse{Job: job("j1", api.StateCancelled), Result: api.ResultCancelled}
	cases := map[string]struct {
		answer   any
		call     func(c *Client) (any, error)
		want     any
		method   string
		path     string
		body     string
		query    url.Values
		wantBody bool
	}{
		"cancel": {answer: action, want: action, method: "POST", path: "/api/v1/jobs/j1/cancel", body: `{}`,
			call: func(c *Client) (any, error) { return c.Cancel(ctx, "j1") }},
		"reprioritize": {answer: action, want: action, method: "POST", path: "/api/v1/jobs/j1/reprioritize", body: `{"priority":0}`,
			call: func(c *Client) (any, error) { return c.Reprioritize(ctx, "j1", 0) }},
		"executions": {answer: api.ExecutionList{Executions: []api.Execution{{JobID: "j1", Attempt: 1, Outcome: "failed"}}},
			want: []api.Execution{{JobID: "j1", Attempt: 1, Outcome: "failed"}}, method: "GET", path: "/api/v1/jobs/j1/executions",
			call: func(c *Client) (any, error) { return c.Executions(ctx, "j1") }},
		"events": {answer: api.EventList{Events: []api.Event{{ID: 7, JobID: "j1", Type: "submitted", At: t0, Detail: json.RawMessage(`{"a":1}`)}}},
			want: []api.Event{{ID: 7, JobID: "j1", Type: "submitted", At: t0, Detail: json.RawMessage(`{"a":1}`)}}, method: "GET", path: "/api/v1/jobs/j1/events",
			call: func(c *Client) (any, error) { return c.Events(ctx, "j1") }},
		"explain": {answer: api.Explanation{JobID: "j1", State: "pending", Code: "tier_cap", Message: "m", Position: 3, Queued: 9},
			want: api.Explanation{JobID: "j1", State: "pending", Code: "tier_cap", Message: "m", Position: 3, Queued: 9}, method: "GET", path: "/api/v1/jobs/j1/explain",
			call: func(c *Client) (any, error) { return c.Explain(ctx, "j1") }},
		"extend-sla": {answer: api.JobResponse{Job: job("j1", "running")}, want: job("j1", "running"), method: "POST",
			path: "/api/v1/jobs/j1/extend-sla", body: `{"extend_ms":90000}`,
			call: func(c *Client) (any, error) { return c.ExtendSLA(ctx, "j1", 90*time.Second) }},
		"failures": {answer: api.FailureReport{Total: 3, Failed: 3, ByClass: map[string]int64{"timeout": 3}},
			want: api.FailureReport{Total: 3, Failed: 3, ByClass: map[string]int64{"timeout": 3}}, method: "GET", path: "/api/v1/failures",
			query: url.Values{"since": {"2026-11-21T06:00:00Z"}, "type": {"report"}, "tenant": {"acme"}},
			call: func(c *Client) (any, error) {
				return c.Failures(ctx, SummaryOptions{Since: t0, Type: "report", Tenant: "acme"})
			}},
		"successes": {answer: api.SuccessReport{Total: 2, Succeeded: 2, P99DurationMS: 7}, want: api.SuccessReport{Total: 2, Succeeded: 2, P99DurationMS: 7}, method: "GET", path: "/api/v1/successes",
			query: url.Values{"until": {"2026-11-21T06:00:00Z"}},
			call:  func(c *Client) (any, error) { return c.Successes(ctx, SummaryOptions{Until: t0}) }},
		"sla": {answer: api.SLAReport{Total: 4, Met: 3, Violated: 1, Compliance: &threeQuarters}, want: api.SLAReport{Total: 4, Met: 3, Violated: 1, Compliance: &threeQuarters},
			method: "GET", path: "/api/v1/sla-compliance",
			call: func(c *Client) (any, error) { return c.SLACompliance(ctx, SummaryOptions{}) }},
		"workers": {answer: api.WorkerList{Workers: []api.WorkerInfo{{ID: "w1", Name: "h1", Slots: 4, State: "active"}}},
			want: []api.WorkerInfo{{ID: "w1", Name: "h1", Slots: 4, State: "active"}}, method: "GET", path: "/api/v1/workers",
			call: func(c *Client) (any, error) { return c.Workers(ctx) }},
		"lanes": {answer: api.LaneList{Lanes: []api.LaneInfo{{Name: "batch", Weight: 2, Pending: 5}}, Capacity: api.Capacity{Slots: 8}},
			want: api.LaneList{Lanes: []api.LaneInfo{{Name: "batch", Weight: 2, Pending: 5}}, Capacity: api.Capacity{Slots: 8}}, method: "GET", path: "/api/v1/lanes",
			call: func(c *Client) (any, error) { return c.Lanes(ctx) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, f := newFake(t, reply(200, tc.answer))
			got, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got)\n%s", diff)
			}
			s := f.last(t)
			wantReq(t, s, tc.method, tc.path, tc.query)
			if tc.body != "" && string(s.Body) != tc.body {
				t.Errorf("body %s, want %s", s.Body, tc.body)
			}
		})
	}
}

func TestHealthAndReady(t *testing.T) {
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			apiError(503, api.CodeServerUnavailable, "store not open")(w, r)
			return
		}
		w.WriteHeader(200)
	})
	if err := c.Health(context.Background()); err != nil {
		t.Errorf("Health: %v", err)
	}
	wantReq(t, f.last(t), "GET", "/healthz", nil)
	if err := c.Ready(context.Background()); !IsRetryable(err) {
		t.Errorf("Ready: %v, want a retryable 503", err)
	}
}

func TestWaitUsesEndEvent(t *testing.T) {
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/jobs/j1/logs":
			startSSE(w).event("end", api.LogEnd{State: api.StateFailed})
		case "/api/v1/jobs/j1":
			writeJSON(w, 200, api.JobResponse{Job: job("j1", api.StateFailed)})
		}
	})
	got, err := c.Wait(context.Background(), "j1")
	if err != nil || got.State != api.StateFailed {
		t.Fatalf("Wait = %+v, %v", got, err)
	}
	reqs := f.all()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (stream, get)", len(reqs))
	}
	wantReq(t, reqs[0], "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}, "attempt": {"1000000000"}})
	if a := reqs[0].Header.Get("Accept"); a != "text/event-stream" {
		t.Errorf("Accept %q", a)
	}
}

func TestWaitPollsWithoutEventStream(t *testing.T) {
	for name, logs := range map[string]http.HandlerFunc{
		"json answer":          reply(200, api.LogList{}),
		"attempt out of range": apiError(400, api.CodeInvalidArgument, "attempt: too large"),
	} {
		t.Run(name, func(t *testing.T) {
			states := []string{api.StatePending, api.StateRunning, api.StateSucceeded}
			var n atomic.Int32
			c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/jobs/j1/logs":
					logs(w, r)
				case "/api/v1/jobs/j1":
					writeJSON(w, 200, api.JobResponse{Job: job("j1", states[min(n.Add(1)-1, 2)])})
				}
			})
			got, err := c.Wait(context.Background(), "j1")
			if err != nil || got.State != api.StateSucceeded || n.Load() != 3 {
				t.Fatalf("Wait = %+v, %v after %d polls", got, err, n.Load())
			}
		})
	}
}

func TestWaitNotFound(t *testing.T) {
	c, _ := newFake(t, apiError(404, api.CodeNotFound, "no job"))
	if _, err := c.Wait(context.Background(), "j1"); !IsNotFound(err) {
		t.Errorf("Wait: %v", err)
	}
}

var threeQuarters = 0.75

// isSubmitToken: tok is 32 lowercase hexadecimal characters.
func isSubmitToken(tok string) bool {
	return len(tok) == 32 && strings.Trim(tok, "0123456789abcdef") == ""
}

func TestSubmitTokensAreDrawnPerCall(t *testing.T) {
	c, f := newFake(t, reply(201, api.SubmitResponse{Job: job("j1", api.StatePending)}))
	seen := map[string]bool{}
	for range 2 {
		if _, err := c.Submit(context.Background(), api.JobSpec{Type: "report"}); err != nil {
			t.Fatal(err)
		}
		seen[f.last(t).Header.Get(api.SubmitTokenHeader)] = true
	}
	if len(seen) != 2 {
		t.Errorf("two submits sent tokens %v, want two different ones", seen)
	}
	if _, err := c.Submit(context.Background(), api.JobSpec{Type: "report", IdempotencyKey: "mine"}); err != nil {
		t.Fatal(err)
	}
	if s := f.last(t); s.Header.Get(api.SubmitTokenHeader) != "" || s.Header.Get("Idempotency-Key") != "mine" {
		t.Errorf("a keyed submit sent token %q and key header %q, want no token and its own key",
			s.Header.Get(api.SubmitTokenHeader), s.Header.Get("Idempotency-Key"))
	}
}
