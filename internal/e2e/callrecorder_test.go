package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// callRecorder is a reverse proxy in front of each instance of an
// haCluster through which the workers and the submitters talk to it: it
// records every call (its kind, the instance it was sent to, when it
// began and ended, the long poll's wait, the answer), so that a test can
// measure how long a partition held each kind of call, as the callers
// saw it. It adds no timeout of its own: a caller that gives up ends its
// call here too. A standby's X-Fairway-Leader is rewritten to the
// leader's front, so that a client following it stays recorded.
type callRecorder struct {
	fronts  []string          // the front's address of each instance
	backFor map[string]string // instance address -> its front
	mu      sync.Mutex
	calls   []recordedCall
}

// recordedCall is one call as a front saw it.
type recordedCall struct {
	kind       string // "submit", "worker lease", "worker heartbeat", ...
	instance   int
	start, end time.Time
	wait       time.Duration // a long poll's wait_ms
	status     int           // 0: no answer (the caller gave up, or the instance did not answer)
	code       string        // the error body's code
}

// took is the call's duration.
func (c recordedCall) took() time.Duration { return c.end.Sub(c.start) }

// overrun is how long the call took past its wait (a long poll's wait_ms;
// 0 for other calls): the time it was held for nothing.
func (c recordedCall) overrun() time.Duration { return max(0, c.took()-c.wait) }

func (c recordedCall) String() string {
	return fmt.Sprintf("%s to instance %d: took %s (wait %s), answer %d %s", c.kind, c.instance,
		c.took().Round(time.Millisecond), c.wait, c.status, c.code)
}

// newCallRecorder starts a front for each of h's instances.
func newCallRecorder(t *testing.T, h *haCluster) *callRecorder {
	r := &callRecorder{backFor: map[string]string{}}
	var lns []net.Listener
	for i := range h.addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		r.fronts = append(r.fronts, ln.Addr().String())
		r.backFor[h.addrs[i]] = ln.Addr().String()
	}
	for i, addr := range h.addrs {
		srv := &http.Server{Handler: r.front(i, addr)}
		go func() { _ = srv.Serve(lns[i]) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	return r
}

// urls is the fronts' base URLs, comma-separated, starting with instance i.
func (r *callRecorder) urlsFrom(i int) string {
	var out []string
	for _, a := range append(slices.Clone(r.fronts[i:]), r.fronts[:i]...) {
		out = append(out, "http://"+a)
	}
	return strings.Join(out, ",")
}

var recorderTransport = &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}

// front proxies to instance i at addr and records each call.
func (r *callRecorder) front(i int, addr string) http.Handler {
	target := &url.URL{Scheme: "http", Host: addr}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		call := recordedCall{kind: callKind(req), instance: i, start: time.Now()}
		if req.Body != nil && req.ContentLength > 0 {
			body, _ := io.ReadAll(req.Body)
			var poll struct {
				WaitMS int64 `json:"wait_ms"`
			}
			_ = json.Unmarshal(body, &poll)
			call.wait = time.Duration(poll.WaitMS) * time.Millisecond
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		p := &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
			Transport:     recorderTransport,
			FlushInterval: -1,
			ModifyResponse: func(resp *http.Response) error {
				call.status = resp.StatusCode
				if l := resp.Header.Get("X-Fairway-Leader"); l != "" && r.backFor[l] != "" {
					resp.Header.Set("X-Fairway-Leader", r.backFor[l])
				}
				if resp.StatusCode >= 400 {
					body, _ := io.ReadAll(resp.Body)
					var e struct {
						Error struct {
							Code string `json:"code"`
						} `json:"error"`
					}
					_ = json.Unmarshal(body, &e)
					call.code = e.Error.Code
					resp.Body = io.NopCloser(bytes.NewReader(body))
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
				call.status, call.code = 0, err.Error()
				w.WriteHeader(http.StatusBadGateway)
			},
		}
		p.ServeHTTP(w, req)
		call.end = time.Now()
		r.mu.Lock()
		r.calls = append(r.calls, call)
		r.mu.Unlock()
	})
}

// callKind names a call by its route: "submit", "worker lease", ...
func callKind(req *http.Request) string {
	p := strings.TrimPrefix(req.URL.Path, "/api/v1/")
	switch {
	case req.Method == http.MethodPost && p == "jobs":
		return "submit"
	case strings.HasPrefix(p, "workers/"):
		parts := strings.Split(p, "/")
		return "worker " + parts[len(parts)-1]
	}
	return req.Method + " " + p
}

// recorded is every call recorded so far.
func (r *callRecorder) recorded() []recordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// callStalls is, per kind of call, the longest stall of a call that ran
// at or after from: its overrun (the time past its wait), and for a long
// poll that was in flight at from, the time from then to its answer (it
// was held by the instance cut off).
func callStalls(calls []recordedCall, from time.Time) map[string]recordedStall {
	out := map[string]recordedStall{}
	for _, c := range calls {
		if c.end.Before(from) {
			continue
		}
		stall := c.overrun()
		if c.wait > 0 && c.start.Before(from) {
			stall = max(stall, c.end.Sub(from))
		}
		if s := out[c.kind]; stall >= s.stall {
			out[c.kind] = recordedStall{stall: stall, call: c, n: s.n + 1}
		} else {
			s.n++
			out[c.kind] = s
		}
	}
	return out
}

// recordedStall is a kind's longest stall, the call it was, and how many
// calls of that kind ran.
type recordedStall struct {
	stall time.Duration
	call  recordedCall
	n     int
}
