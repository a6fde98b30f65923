package server

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// fuzzRoutes are the endpoints FuzzEndpoints throws bodies and query
// strings at; {job} and {worker} name a job and a worker that exist. The
// long poll (lease), deregistration and log following are left out: they
// wait or remove the worker the other inputs need.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/api/v1/jobs"},
	{"POST", "/api/v1/jobs/batch"},
	{"GET", "/api/v1/jobs"},
	{"GET", "/api/v1/jobs/{job}"},
	{"POST", "/api/v1/jobs/{job}/reprioritize"},
	{"POST", "/api/v1/jobs/{job}/extend-sla"},
	{"GET", "/api/v1/jobs/{job}/executions"},
	{"GET", "/api/v1/jobs/{job}/events"},
	{"GET", "/api/v1/jobs/{job}/logs"},
	{"GET", "/api/v1/jobs/{job}/explain"},
	{"GET", "/api/v1/failures"},
	{"GET", "/api/v1/successes"},
	{"GET", "/api/v1/sla-compliance"},
	{"GET", "/api/v1/lanes"},
	{"GET", "/api/v1/workers"},
	{"POST", "/api/v1/workers/register"},
	{"POST", "/api/v1/workers/{worker}/start"},
	{"POST", "/api/v1/workers/{worker}/heartbeat"},
	{"POST", "/api/v1/workers/{worker}/complete"},
	{"POST", "/api/v1/workers/{worker}/logs"},
	{"POST", "/api/v1/jobs/{job}/cancel"},
}

// FuzzEndpoints sends arbitrary bodies and query strings to every endpoint
// that answers at once: the answer is always a JSON object and never a
// 5xx, whatever the client sends.
func FuzzEndpoints(f *testing.F) {
	seeds := []struct {
		route       uint8
		query, body string
	}{
		{0, "", `{"type":"a","priority":7}`},
		{1, "", `{"jobs":[{"type":"a"},{"type":"b","lane":""}]}`},
		{2, "state=pending&state=running&limit=3&created_after=2026-01-01T00:00:00Z", ``},
		{2, "cursor=%00&limit=-1", ``},
		{4, "", `{"priority":1000}`},
		{5, "", `{"extra_ms":-5}`},
		{8, "attempt=0&stream=stderr&after=9999999999999999999", ``},
		{10, "since=yesterday&type=a", ``},
		{15, "", `{"name":"w","slots":2,"types":["a"],"resources":{"cpu":1e308}}`},
		{16, "", `{"jobs":[{"job_id":"{job}","attempt":1,"started_at":"0001-01-01T00:00:00Z"}]}`},
		{17, "", `{"jobs":[{"job_id":"{job}","attempt":-1}]}`},
		{18, "", `{"results":[{"job_id":"{job}","attempt":1,"outcome":"failed","exit_code":-2147483649}],"lease":{"max":3}}`},
		{19, "", `{"chunks":[{"job_id":"{job}","attempt":1,"seq":-1,"stream":"stdout","data":"aGk="}]}`},
		{20, "", `{"reason":""}`},
	}
	for _, s := range seeds {
		f.Add(s.route, s.query, []byte(s.body))
	}
	h := newHarness(f, defaultConfig())
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	worker := h.register(api.RegisterRequest{Name: "fuzz", Slots: 4})
	fill := strings.NewReplacer("{job}", job.ID, "{worker}", worker)
	f.Fuzz(func(t *testing.T, route uint8, query string, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		q, err := url.ParseQuery(query)
		if err != nil {
			q = url.Values{}
		}
		q.Del("wait")   // wait=true holds the answer until the job ends
		q.Del("follow") // follow streams until the job ends
		requireJSONAnswer(t, h, r.method, fill.Replace(r.path)+"?"+q.Encode(), []byte(fill.Replace(string(body))))
	})
}

// requireJSONAnswer sends body to the server's handler and fails unless the
// answer is a JSON object with a status below 500.
func requireJSONAnswer(t *testing.T, h *harness, method, target string, body []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.srv.Handler().ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s: HTTP %d for %q: %s", method, target, rec.Code, body, rec.Body.Bytes())
	}
	if !bytes.HasPrefix(bytes.TrimSpace(rec.Body.Bytes()), []byte("{")) {
		t.Fatalf("%s %s: non-JSON answer for %q: %s", method, target, body, rec.Body.Bytes())
	}
}
