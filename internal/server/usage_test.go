package server

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// An attempt's measured usage travels from the completion to GET
// executions, and GET /usage adds up requested and measured figures per
// tenant and per lane over a window; a tenant key sees its own tenant.
func TestUsageReportsRequestedAndMeasured(t *testing.T) {
	cfg := keyedConfig()
	cfg.Lanes = map[string]config.Lane{"default": {}, "batch": {}}
	h := newHarness(t, cfg)
	begin := h.clock.Now()
	h.key = "acme-key-0123456789"
	job := h.submit(api.JobSpec{Type: "echo", MaxAttempts: 1, Resources: &api.Resources{CPU: 2, MemoryMB: 1024, GPU: 1}})
	h.key = "globex-key-0123456789"
	other := h.submit(api.JobSpec{Type: "echo", MaxAttempts: 1, Lane: "batch"})
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 2, CPU: 4, MemoryMB: 4096, GPU: 1})
	if leases := h.lease(w, 2); len(leases) != 2 {
		t.Fatalf("leases = %+v", leases)
	}
	h.start(w, job.ID, 1)
	h.start(w, other.ID, 1)
	h.clock.Advance(10 * time.Second)
	started, finished := begin, begin.Add(10*time.Second)
	usage := &api.Usage{CPUUserUS: 3_000_000, CPUSystemUS: 1_000_000, PeakRSSBytes: 512 << 20, Source: "cgroup"}
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSucceeded,
		StartedAt: &started, FinishedAt: &finished, Usage: usage}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	if r := h.complete(w, api.Completion{JobID: other.ID, Attempt: 1, Outcome: api.OutcomeSucceeded,
		StartedAt: &started, FinishedAt: &finished}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	h.clock.Advance(time.Second)

	h.key = "admin-key-0123456789"
	var execs api.ExecutionList
	if code := h.do("GET", "/jobs/"+job.ID+"/executions", nil, &execs); code != http.StatusOK || len(execs.Executions) != 1 {
		t.Fatalf("executions: HTTP %d %+v", code, execs)
	}
	if got := execs.Executions[0].Usage; got == nil || *got != *usage {
		t.Errorf("execution usage = %+v, want %+v", got, usage)
	}

	var rep api.UsageReport
	if code := h.do("GET", "/usage?by=tenant&since="+url.QueryEscape(begin.Format(time.RFC3339Nano)), nil, &rep); code != http.StatusOK {
		t.Fatalf("GET /usage: HTTP %d", code)
	}
	want := []api.UsageRow{
		{Key: "acme", Jobs: 1, Attempts: 1, WallSeconds: 10, CoreSeconds: 20, GPUSeconds: 10, MemoryGBSeconds: 10,
			MeasuredAttempts: 1, CPUSeconds: 4, PeakMemoryGBSeconds: 5},
		{Key: "globex", Jobs: 1, Attempts: 1, WallSeconds: 10},
	}
	if len(rep.Rows) != 2 || rep.Rows[0] != want[0] || rep.Rows[1] != want[1] || rep.By != "tenant" {
		t.Errorf("usage by tenant = %+v, want %+v", rep, want)
	}
	rep = api.UsageReport{}
	h.do("GET", "/usage?by=lane", nil, &rep) // the default window: the last 24 hours
	if len(rep.Rows) != 2 || rep.Rows[0].Key != "batch" || rep.Rows[1].Key != "default" {
		t.Errorf("usage by lane = %+v", rep.Rows)
	}
	h.key = "globex-key-0123456789"
	rep = api.UsageReport{}
	h.do("GET", "/usage", nil, &rep)
	if len(rep.Rows) != 1 || rep.Rows[0].Key != "globex" {
		t.Errorf("globex sees %+v, want its own row only", rep.Rows)
	}
	h.key = "worker-key-0123456789"
	if code := h.do("GET", "/usage", nil, nil); code != http.StatusForbidden {
		t.Errorf("worker key: HTTP %d, want 403", code)
	}
}

// Bad usage parameters and bad usage reports are refused with a field
// that says what to fix.
func TestUsageBadInput(t *testing.T) {
	h := newHarness(t, defaultConfig())
	now := h.clock.Now()
	future := url.QueryEscape(now.Add(time.Hour).Format(time.RFC3339))
	past := url.QueryEscape(now.Add(-time.Hour).Format(time.RFC3339))
	for name, tc := range map[string]struct{ query, field string }{
		"unknown grouping":  {"by=type", "by"},
		"since in future":   {"since=" + future, "since"},
		"since after until": {"since=" + past + "&until=" + url.QueryEscape(now.Add(-2*time.Hour).Format(time.RFC3339)), "since"},
		"since not a time":  {"since=7d", "since"},
		"unknown parameter": {"tenant=acme", "tenant"},
	} {
		var e api.ErrorResponse
		code := h.do("GET", "/usage?"+tc.query, nil, &e)
		wantCode := api.CodeInvalidArgument
		if tc.field == "tenant" {
			wantCode = api.CodeUnknownParameter
		}
		if code != http.StatusBadRequest || e.Error.Code != wantCode || e.Error.Field != tc.field {
			t.Errorf("%s: HTTP %d %+v, want 400 %s on %q", name, code, e.Error, wantCode, tc.field)
		}
	}

	job := h.submit(api.JobSpec{Type: "echo", MaxAttempts: 1})
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	h.lease(w, 1)
	for name, u := range map[string]api.Usage{
		"negative cpu":   {CPUUserUS: -1, Source: "rusage"},
		"unknown source": {CPUUserUS: 1, Source: "guess"},
	} {
		body := api.CompleteRequest{Results: []api.Completion{{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, Usage: &u}}}
		if code := h.do("POST", "/workers/"+w+"/complete", body, nil); code != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d, want 400", name, code)
		}
	}
}
