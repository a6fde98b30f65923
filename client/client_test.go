package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestNewNormalizesBaseURL(t *testing.T) {
	cases := map[string]string{
		"http://127.0.0.1:7070":          "http://127.0.0.1:7070",
		"http://127.0.0.1:7070/":         "http://127.0.0.1:7070",
		"127.0.0.1:7070":                 "http://127.0.0.1:7070",
		"https://sched.example/api/v1/":  "https://sched.example",
		"http://h/prefix/api/v1":         "http://h/prefix",
		" http://h:1?x=y ":               "http://h:1",
		"https://sched.example/fairway/": "https://sched.example/fairway",
	}
	for in, want := range cases {
		c, err := New(in)
		if err != nil {
			t.Errorf("New(%q): %v", in, err)
			continue
		}
		if c.BaseURL() != want {
			t.Errorf("New(%q).BaseURL() = %q, want %q", in, c.BaseURL(), want)
		}
	}
	for _, bad := range []string{"", "ftp://h", "http://", "http://[::1"} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%q) accepted a bad URL", bad)
		}
	}
}

func TestDefaultTransportSuitsManyRequestsAndLongPolls(t *testing.T) {
	c, err := New("http://h")
	if err != nil {
		t.Fatal(err)
	}
	if c.hc.Timeout != 0 {
		t.Errorf("http.Client.Timeout = %v: it would cut long polls", c.hc.Timeout)
	}
	tr := c.hc.Transport.(*http.Transport)
	if tr.MaxIdleConnsPerHost < 256 || tr.ResponseHeaderTimeout != 0 {
		t.Errorf("transport MaxIdleConnsPerHost=%d ResponseHeaderTimeout=%v", tr.MaxIdleConnsPerHost, tr.ResponseHeaderTimeout)
	}
}

func TestRequestHeaders(t *testing.T) {
	c, f := newFake(t, reply(201, api.SubmitResponse{Job: job("j1", api.StatePending)}))
	if _, err := c.Submit(context.Background(), api.JobSpec{Type: "report", IdempotencyKey: "nightly-1"}); err != nil {
		t.Fatal(err)
	}
	h := f.last(t).Header
	for k, want := range map[string]string{
		"Authorization":   "Bearer k1",
		"Content-Type":    "application/json",
		"Accept":          "application/json",
		"User-Agent":      DefaultUserAgent,
		"Idempotency-Key": "nightly-1",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestOptions(t *testing.T) {
	var n atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		if r.Header.Get("User-Agent") != "ua/9" || r.Header.Get("Authorization") != "" {
			t.Errorf("headers %v", r.Header)
		}
		return nil, errors.New("no network here")
	})}
	c, err := New("http://h", WithHTTPClient(hc), WithUserAgent("ua/9"), WithAPIKey(""))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(context.Background()); err == nil || n.Load() != 1 {
		t.Errorf("Health through the given http.Client: err %v, calls %d", err, n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestErrorDecoding(t *testing.T) {
	cases := map[string]struct {
		h    http.HandlerFunc
		want api.Error
	}{
		"api error with field and Retry-After": {
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "3")
				writeJSON(w, 429, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeRateLimited, Message: "slow down", Field: "tenant"}})
			},
			want: api.Error{Status: 429, RetryAfter: 3, ErrorBody: api.ErrorBody{Code: "rate_limited", Message: "slow down", Field: "tenant"}},
		},
		"proxy page": {
			h: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "upstream down", http.StatusBadGateway)
			},
			want: api.Error{Status: 502, ErrorBody: api.ErrorBody{Code: api.CodeServerUnavailable, Message: "upstream down"}},
		},
		"empty 500": {
			h:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) },
			want: api.Error{Status: 500, ErrorBody: api.ErrorBody{Code: api.CodeInternal, Message: "Internal Server Error"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := newFake(t, tc.h)
			c.retryDeadline = 0 // the proxy's 502 would be retried
			_, err := c.Get(context.Background(), "j1")
			e, ok := APIError(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *api.Error", err, err)
			}
			if diff := cmp.Diff(tc.want, *e); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestErrorPredicates(t *testing.T) {
	e := func(status int, code string) error {
		return &api.Error{Status: status, ErrorBody: api.ErrorBody{Code: code}}
	}
	netErr := &net.OpError{Op: "dial", Err: errors.New("refused")}
	cases := map[string]struct {
		err                        error
		notFound, stale, retryable bool
	}{
		"404":              {err: e(404, api.CodeNotFound), notFound: true},
		"wrapped 404":      {err: wrap("get job x", e(404, api.CodeNotFound)), notFound: true},
		"stale":            {err: e(409, api.CodeStaleAttempt), stale: true},
		"conflict":         {err: e(409, api.CodeConflict)},
		"429":              {err: e(429, api.CodeRateLimited), retryable: true},
		"503":              {err: e(503, api.CodeOverloaded), retryable: true},
		"500":              {err: e(500, api.CodeInternal)},
		"400":              {err: e(400, api.CodeInvalidArgument)},
		"network":          {err: wrap("submit", netErr), retryable: true},
		"cancelled":        {err: wrap("submit", context.Canceled)},
		"deadline":         {err: context.DeadlineExceeded},
		"nil":              {err: nil},
		"item stale":       {err: ResultError(api.ItemResult{JobID: "j", Error: &api.ErrorBody{Code: api.CodeStaleAttempt}}), stale: true},
		"item not found":   {err: ResultError(api.ItemResult{JobID: "j", Error: &api.ErrorBody{Code: api.CodeNotFound}}), notFound: true},
		"item no reason":   {err: ResultError(api.ItemResult{JobID: "j"})},
		"item ok":          {err: ResultError(api.ItemResult{JobID: "j", OK: true})},
		"plain error":      {err: errors.New("x")},
		"dropped stream":   {err: errStreamDropped, retryable: true},
		"ErrNoEventStream": {err: ErrNoEventStream},
	}
	for name, tc := range cases {
		if got := IsNotFound(tc.err); got != tc.notFound {
			t.Errorf("%s: IsNotFound = %v", name, got)
		}
		if got := IsStaleAttempt(tc.err); got != tc.stale {
			t.Errorf("%s: IsStaleAttempt = %v", name, got)
		}
		if got := IsRetryable(tc.err); got != tc.retryable {
			t.Errorf("%s: IsRetryable = %v", name, got)
		}
	}
}

func TestUnreachableServerIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := New(url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), "j1")
	if err == nil || !IsRetryable(err) || !IsNetworkError(err) {
		t.Errorf("unreachable server: %v, retryable %v", err, IsRetryable(err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Get(ctx, "j1"); IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, retryable %v", err, IsRetryable(err))
	}
}

// Hundreds of concurrent calls share pooled connections: the server sees at
// most one connection per concurrent caller, not one per request.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	const callers, each = 200, 10
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(reply(200, api.JobResponse{Job: job("j1", api.StateRunning)}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				if _, err := c.Get(context.Background(), "j1"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n > 2*callers {
		t.Errorf("%d connections for %d concurrent callers x %d calls", n, callers, each)
	}
}

func TestRetryAfter(t *testing.T) {
	for h, want := range map[string]int{"": 0, "7": 7, "-1": 0, "x": 0} {
		if got := retryAfter(h); got != want {
			t.Errorf("retryAfter(%q) = %d, want %d", h, got, want)
		}
	}
	// an HTTP date: seconds from now, to within its one-second resolution
	if got := retryAfter(time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)); got < 89 || got > 90 {
		t.Errorf("retryAfter(now+90s) = %d", got)
	}
	if got := retryAfter(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)); got != 0 {
		t.Errorf("retryAfter(an hour ago) = %d", got)
	}
}
