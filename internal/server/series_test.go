package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// The series counts what the workload did, in the steps it happened: a
// job that waited 2 s for its lease and succeeded, one that waited 30 s
// and failed, an acme job and a globex one.
func TestSeriesCountsAttemptsAndWaitsPerStep(t *testing.T) {
	cfg := keyedConfig()
	h := newHarness(t, cfg)
	begin := h.clock.Now()
	h.key = "acme-key-0123456789"
	ok := h.submit(api.JobSpec{Type: "echo", MaxAttempts: 1})
	h.clock.Advance(2 * time.Second) // no worker yet: it waits 2 s
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w1", Slots: 1})
	leases := h.lease(w, 1)
	if len(leases) != 1 || leases[0].Job.ID != ok.ID {
		t.Fatalf("leases = %+v", leases)
	}
	h.start(w, ok.ID, 1)
	h.clock.Advance(time.Second)
	exit := 0
	if r := h.complete(w, api.Completion{JobID: ok.ID, Attempt: 1, Outcome: api.OutcomeSucceeded, ExitCode: &exit}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}

	h.key = "worker-key-0123456789"
	h.do("POST", "/workers/"+w+"/deregister", struct{}{}, nil)
	h.clock.Advance(2 * time.Minute)
	h.key = "globex-key-0123456789"
	bad := h.submit(api.JobSpec{Type: "echo", MaxAttempts: 1})
	h.clock.Advance(30 * time.Second)
	h.key = "worker-key-0123456789"
	w = h.register(api.RegisterRequest{Name: "w2", Slots: 1})
	h.lease(w, 1)
	h.start(w, bad.ID, 1)
	exit = 3
	if r := h.complete(w, api.Completion{JobID: bad.ID, Attempt: 1, Outcome: api.OutcomeFailed, FailureClass: "exit_code", ExitCode: &exit}); !r.OK {
		t.Fatalf("complete: %+v", r)
	}
	h.clock.Advance(time.Minute)

	h.key = "admin-key-0123456789"
	var s api.Series
	if code := h.do("GET", "/series", nil, &s); code != http.StatusOK {
		t.Fatalf("GET /series: HTTP %d", code)
	}
	end := h.clock.Now().Truncate(time.Minute).Add(time.Minute)
	if len(s.Points) != 60 || s.StepMS != 60000 || !s.Until.Equal(end) || !s.Since.Equal(end.Add(-time.Hour)) {
		t.Fatalf("default series: %d points of %d ms over [%s, %s)", len(s.Points), s.StepMS, s.Since, s.Until)
	}
	var finished = map[string]int64{}
	var leased int64
	var maxWait float64
	for _, pt := range s.Points {
		for o, n := range pt.Finished {
			finished[o] += n
		}
		leased += pt.Leased
		maxWait = max(maxWait, pt.WaitMaxMS)
	}
	if finished["succeeded"] != 1 || finished["failed"] != 1 || leased != 2 || maxWait != 30000 {
		t.Errorf("last hour: finished %v, leased %d, max wait %v ms; want 1 succeeded, 1 failed, 2 leased, 30000", finished, leased, maxWait)
	}

	// One step per minute from the start: the first minute holds the 2 s
	// wait and the success, the third the 30 s wait and the failure.
	s = api.Series{}
	q := "/series?step=1m&since=" + begin.Format(time.RFC3339Nano) + "&until=" + begin.Add(4*time.Minute).Format(time.RFC3339Nano)
	if code := h.do("GET", q, nil, &s); code != http.StatusOK || len(s.Points) != 4 {
		t.Fatalf("GET %s: HTTP %d, %d points", q, code, len(s.Points))
	}
	if p := s.Points[0]; p.Leased != 1 || p.WaitMaxMS != 2000 || p.WaitMeanMS != 2000 || p.WaitP50MS != 2000 || p.Finished["succeeded"] != 1 {
		t.Errorf("minute 0: %+v", p)
	}
	if p := s.Points[2]; p.Leased != 1 || p.WaitMaxMS != 30000 || p.WaitP95MS != 30000 || p.Finished["failed"] != 1 {
		t.Errorf("minute 2: %+v", p)
	}
	if p := s.Points[1]; p.Leased != 0 || len(p.Finished) != 0 {
		t.Errorf("minute 1: %+v, want empty", p)
	}

	// A tenant key sees its own jobs' attempts only, whatever it asks.
	h.key = "acme-key-0123456789"
	s = api.Series{}
	if code := h.do("GET", q+"&tenant=globex", nil, &s); code != http.StatusOK {
		t.Fatalf("acme's series: HTTP %d", code)
	}
	if s.Points[2].Leased != 0 || len(s.Points[2].Finished) != 0 || s.Points[0].Leased != 1 {
		t.Errorf("acme's series shows globex's job: %+v", s.Points)
	}
	h.key = "worker-key-0123456789"
	var e api.ErrorResponse
	if code := h.do("GET", "/series", nil, &e); code != http.StatusForbidden {
		t.Errorf("a worker key: HTTP %d, want 403", code)
	}
	h.key = "admin-key-0123456789"
	for _, bad := range []string{"step=1ms", "step=soon", "step=1s&since=2026-01-01&until=2026-01-03", "since=tomorrow",
		"since=" + begin.Format(time.RFC3339) + "&until=" + begin.Format(time.RFC3339), "colour=red"} {
		e = api.ErrorResponse{}
		if code := h.do("GET", "/series?"+bad, nil, &e); code != http.StatusBadRequest || e.Error.Code == "" {
			t.Errorf("GET /series?%s: HTTP %d %+v, want 400 with a code", bad, code, e)
		}
	}
}
