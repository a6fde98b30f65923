package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

func TestBadInputIsA4xxWithACode(t *testing.T) {
	h := newHarness(t, defaultConfig())
	big := `{"type":"a","payload":"` + strings.Repeat("x", 2<<20) + `"}`
	cases := map[string]struct {
		method, path, body, contentType string
		status                          int
		code, field                     string
	}{
		"malformed json":      {"POST", "/jobs", `{"type":`, "", 400, api.CodeMalformedJSON, ""},
		"not an object":       {"POST", "/jobs", `[1,2]`, "", 400, api.CodeInvalidArgument, ""},
		"trailing data":       {"POST", "/jobs", `{"type":"a"} {}`, "", 400, api.CodeMalformedJSON, ""},
		"empty body":          {"POST", "/jobs", ``, "", 400, api.CodeMalformedJSON, ""},
		"unknown field":       {"POST", "/jobs", `{"type":"a","prio":5}`, "", 400, api.CodeUnknownField, "prio"},
		"oversized body":      {"POST", "/jobs", big, "", 413, api.CodeBodyTooLarge, ""},
		"wrong content type":  {"POST", "/jobs", `{"type":"a"}`, "text/plain", 415, api.CodeUnsupportedMedia, ""},
		"missing type":        {"POST", "/jobs", `{"command":["x"]}`, "", 400, api.CodeInvalidArgument, "type"},
		"priority too high":   {"POST", "/jobs", `{"type":"a","priority":1001}`, "", 400, api.CodeInvalidArgument, "priority"},
		"priority negative":   {"POST", "/jobs", `{"type":"a","priority":-1}`, "", 400, api.CodeInvalidArgument, "priority"},
		"priority not int":    {"POST", "/jobs", `{"type":"a","priority":"high"}`, "", 400, api.CodeInvalidArgument, "priority"},
		"negative cpu":        {"POST", "/jobs", `{"type":"a","resources":{"cpu":-1}}`, "", 400, api.CodeInvalidArgument, "resources.cpu"},
		"negative memory":     {"POST", "/jobs", `{"type":"a","resources":{"memory_mb":-5}}`, "", 400, api.CodeInvalidArgument, "resources.memory_mb"},
		"unknown lane":        {"POST", "/jobs", `{"type":"a","lane":"nope"}`, "", 400, api.CodeInvalidArgument, "lane"},
		"bad retry kind":      {"POST", "/jobs", `{"type":"a","retry":{"kind":"sometimes"}}`, "", 400, api.CodeInvalidArgument, "retry.kind"},
		"bad sla policy":      {"POST", "/jobs", `{"type":"a","sla_policy":"lax"}`, "", 400, api.CodeInvalidArgument, "sla_policy"},
		"shell not allowed":   {"POST", "/jobs", `{"type":"a","shell":true,"command":["echo hi"]}`, "", 400, api.CodeInvalidArgument, "shell"},
		"unknown dependency":  {"POST", "/jobs", `{"type":"a","depends_on":[{"job_id":"nope"}]}`, "", 400, api.CodeInvalidArgument, "depends_on[0].job_id"},
		"bad condition":       {"POST", "/jobs", `{"type":"a","depends_on":[{"job_id":"x","condition":"maybe"}]}`, "", 400, api.CodeInvalidArgument, "depends_on[0].condition"},
		"env with equals":     {"POST", "/jobs", `{"type":"a","env":{"A=B":"c"}}`, "", 400, api.CodeInvalidArgument, "env"},
		"empty batch":         {"POST", "/jobs/batch", `{"jobs":[]}`, "", 400, api.CodeInvalidArgument, "jobs"},
		"bad job in batch":    {"POST", "/jobs/batch", `{"jobs":[{"type":"a"},{"type":"a","priority":2000}]}`, "", 400, api.CodeInvalidArgument, "jobs[1].priority"},
		"unknown job":         {"GET", "/jobs/nope", ``, "", 404, api.CodeNotFound, ""},
		"bad list limit":      {"GET", "/jobs?limit=0", ``, "", 400, api.CodeInvalidArgument, "limit"},
		"bad list state":      {"GET", "/jobs?state=sleeping", ``, "", 400, api.CodeInvalidArgument, "state"},
		"bad cursor":          {"GET", "/jobs?cursor=zzz", ``, "", 400, api.CodeInvalidArgument, "cursor"},
		"reprioritize no val": {"POST", "/jobs/x/reprioritize", `{}`, "", 400, api.CodeInvalidArgument, "priority"},
		"unknown worker":      {"POST", "/workers/nope/lease", `{"max":1}`, "", 404, api.CodeNotFound, ""},
		"lease max zero":      {"POST", "/workers/nope/lease", `{"max":0}`, "", 400, api.CodeInvalidArgument, "max"},
		"register no slots":   {"POST", "/workers/register", `{"name":"w"}`, "", 400, api.CodeInvalidArgument, "slots"},
		"bad outcome":         {"POST", "/workers/x/complete", `{"results":[{"job_id":"j","attempt":1,"outcome":"meh"}]}`, "", 400, api.CodeInvalidArgument, "results[0].outcome"},
		"no route":            {"GET", "/nope", ``, "", 404, api.CodeNotFound, ""},
		"bad traceparent":     {"POST", "/jobs", `{"type":"a","traceparent":"00-zz-01"}`, "", 400, api.CodeInvalidArgument, "traceparent"},
		"zero trace id":       {"POST", "/jobs", `{"type":"a","traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}`, "", 400, api.CodeInvalidArgument, "traceparent"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, h.http.URL+"/api/v1"+c.path, strings.NewReader(c.body))
			ct := c.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e api.ErrorResponse
			b, _ := io.ReadAll(resp.Body)
			if err := decodeBytes(b, &e); err != nil {
				t.Fatalf("error body is not the JSON error shape: %q", b)
			}
			if resp.StatusCode != c.status || e.Error.Code != c.code || e.Error.Field != c.field || e.Error.Message == "" {
				t.Fatalf("HTTP %d %+v, want %d %s field %q", resp.StatusCode, e.Error, c.status, c.code, c.field)
			}
		})
	}
}

func TestUnknownTypesRefusedWhenConfigured(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.AllowUnknownTypes = false
	cfg.Types = map[string]config.Type{"report": {}}
	h := newHarness(t, cfg)
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "rport"}, &e); code != 400 || e.Error.Field != "type" || !strings.Contains(e.Error.Message, "report") {
		t.Fatalf("HTTP %d %+v", code, e)
	}
}

func TestTenantKeysIsolateJobs(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	h := newHarness(t, cfg)
	if code := h.do("GET", "/jobs", nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("no key: HTTP %d", code)
	}
	h.key = "acme-key-0123456789"
	job := h.submit(api.JobSpec{Type: "a"})
	if job.Tenant != "acme" {
		t.Fatalf("tenant = %s", job.Tenant)
	}
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Tenant: "globex"}, nil); code != http.StatusForbidden {
		t.Fatalf("submit for another tenant: HTTP %d", code)
	}
	if code := h.do("POST", "/workers/register", api.RegisterRequest{Slots: 1}, nil); code != http.StatusForbidden {
		t.Fatalf("tenant registering a worker: HTTP %d", code)
	}
	h.key = "globex-key-0123456789"
	for _, path := range []string{"/jobs/" + job.ID, "/jobs/" + job.ID + "/logs"} {
		if code := h.do("GET", path, nil, nil); code != http.StatusNotFound {
			t.Fatalf("other tenant GET %s: HTTP %d", path, code)
		}
	}
	if code := h.do("DELETE", "/jobs/"+job.ID, nil, nil); code != http.StatusNotFound {
		t.Fatalf("other tenant cancel: HTTP %d", code)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("other tenant lists %d jobs", len(list.Jobs))
	}
	h.key = "admin-key-0123456789"
	if got := h.get(job.ID); got.ID != job.ID {
		t.Fatal("admin cannot see the job")
	}
}

func TestSubmitRateAndQueueLimits(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{"slow": {SubmitRate: 1, SubmitBurst: 2}, "small": {MaxQueued: 1}}
	h := newHarness(t, cfg)
	for i := range 2 {
		if code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Tenant: "slow"}, nil); code != http.StatusCreated {
			t.Fatalf("submit %d within burst: HTTP %d", i, code)
		}
	}
	req, _ := http.NewRequest("POST", h.http.URL+"/api/v1/jobs", strings.NewReader(`{"type":"a","tenant":"slow"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over rate: HTTP %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	h.submit(api.JobSpec{Type: "a", Tenant: "small"})
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Tenant: "small"}, &e); code != http.StatusServiceUnavailable || e.Error.Code != api.CodeOverloaded {
		t.Fatalf("over max_queued: HTTP %d %+v", code, e)
	}
}

// FuzzSubmitDecoder throws arbitrary bodies at the submit endpoint: the
// answer is always a JSON object and never a 5xx.
func FuzzSubmitDecoder(f *testing.F) {
	for _, s := range []string{`{"type":"a"}`, `{"type":"a","priority":5,"resources":{"cpu":0.5}}`, `{`, `null`, `{"type":"a","depends_on":[{"job_id":""}]}`, `{"type":"a","run_at":"2026-01-01T00:00:00Z","retry":{"kind":"fixed","delay_ms":-1}}`, `{"type":"a","payload":{"x":[1,2]}}`} {
		f.Add([]byte(s))
	}
	h := newHarness(f, defaultConfig())
	f.Fuzz(func(t *testing.T, body []byte) {
		requireJSONAnswer(t, h, "POST", "/api/v1/jobs", body)
	})
}

// Issue 9 item 6: a body of the wrong shape is answered in the API's
// words, naming the field, never a Go type.
func TestDecodeErrorsSayItInTheAPIsWords(t *testing.T) {
	h := newHarness(t, defaultConfig())
	cases := []struct{ path, body, field, message string }{
		{"/jobs", `[1]`, "", "body must be a JSON object (a job spec), got an array"},
		{"/jobs", `{"type":"a","command":"echo hi"}`, "command", `command must be an array of strings, e.g. ["echo","hi"], got a string`},
		{"/jobs", `{"type":"a","labels":[1]}`, "labels", `labels must be an array of strings, e.g. ["gpu"]; one of its items is a number`},
		{"/jobs", `{"type":"a","priority":1.5}`, "priority", "priority must be a whole number, got the number 1.5"},
		{"/jobs", `{"type":"a","resources":{"cpu":"1"}}`, "resources.cpu", "resources.cpu must be a number, got a string"},
		{"/jobs", `{"type":"a","on_demand":"yes"}`, "on_demand", "on_demand must be true or false, got a string"},
		{"/jobs", `{"type":"a","run_at":"tomorrow"}`, "run_at", `run_at must be an RFC 3339 time, e.g. "2026-12-01T09:00:00Z"`},
		{"/jobs/batch", `{"jobs":[{"type":"a","run_at":5}]}`, "jobs[0].run_at", "jobs[0].run_at must be an RFC 3339 time"},
		{"/jobs/batch", `{"jobs":{}}`, "jobs", "jobs must be an array of job specs"},
		{"/workers/register", `{"name":"w","slots":"two"}`, "slots", "slots must be a whole number, got a string"},
		// Issue 28 item 25: objects are shown by example, never named
		// after a Go struct ("a JSON object (a resources)").
		{"/jobs", `{"type":"a","resources":[1]}`, "resources", `resources must be an object, e.g. {"cpu":0.5,"memory_mb":512,"gpu":1}, got an array`},
		{"/jobs", `{"type":"a","retry":"fast"}`, "retry", `retry must be an object, e.g. {"kind":"exponential","delay_ms":1000`},
		{"/jobs", `{"type":"a","depends_on":["x"]}`, "depends_on", `depends_on must be an array of objects, e.g. [{"job_id":"01J...","condition":"success"}]; one of its items is a string`},
		{"/schedules", `{"name":"n","spec":"every 1m","template":[]}`, "template", `template must be a job spec, e.g. {"type":"report","command":["echo","hi"]}, got an array`},
	}
	for _, c := range cases {
		var e api.ErrorResponse
		code := h.do("POST", c.path, c.body, &e)
		if code != http.StatusBadRequest || e.Error.Code != api.CodeInvalidArgument || e.Error.Field != c.field ||
			!strings.HasPrefix(e.Error.Message, c.message) {
			t.Errorf("POST %s %s: HTTP %d %+v\nwant field %q, message %q", c.path, c.body, code, e.Error, c.field, c.message)
		}
		for _, goWord := range []string{"api.", "[]", "int64", "float64", "string,", "(a resources)", "policy)"} {
			if strings.Contains(e.Error.Message, goWord) {
				t.Errorf("POST %s %s: the message names a Go type (%q): %s", c.path, c.body, goWord, e.Error.Message)
			}
		}
	}
}
