package server

import (
	"net/http"
	"slices"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// A paused lane leases nothing while the others go on, its running job
// finishes, explain says lane_paused, the pause survives a restart, and
// resumed its jobs run; only admin keys may pause.
func TestAPausedLaneLeasesNothingUntilResumed(t *testing.T) {
	cfg := defaultConfig()
	cfg.Lanes = map[string]config.Lane{"default": {}, "batch": {}}
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{"acme": {APIKeys: []string{"acme-key-0123456789"}}}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	running := h.submit(api.JobSpec{Type: "a", Lane: "batch"})
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Job.ID != running.ID {
		t.Fatalf("first lease: %+v", ls)
	}

	h.key = "acme-key-0123456789"
	var e api.ErrorResponse
	if code := h.do("POST", "/lanes/batch/pause", api.PauseLaneRequest{}, &e); code != http.StatusForbidden {
		t.Errorf("a tenant pausing a lane: HTTP %d, want 403", code)
	}
	h.key = "admin-key-0123456789"
	var r api.LaneActionResponse
	if code := h.do("POST", "/lanes/batch/pause", api.PauseLaneRequest{Note: "db migration"}, &r); code != http.StatusOK ||
		r.Result != api.ResultPaused || !r.Lane.Paused || r.Lane.PauseNote != "db migration" {
		t.Fatalf("pause: HTTP %d %+v", code, r)
	}
	if code := h.do("POST", "/lanes/batch/pause", nil, &r); code != http.StatusOK || r.Result != api.ResultAlreadyPaused {
		t.Errorf("pause again: HTTP %d %+v", code, r)
	}
	if code := h.do("POST", "/lanes/nope/pause", nil, &e); code != http.StatusNotFound {
		t.Errorf("pause an unknown lane: HTTP %d, want 404", code)
	}

	h.key = "acme-key-0123456789"
	queued := h.submit(api.JobSpec{Type: "a", Lane: "batch"})
	other := h.submit(api.JobSpec{Type: "a"})
	h.key = "worker-key-0123456789"
	if r := h.complete(w, api.Completion{JobID: running.ID, Attempt: 1, Outcome: "succeeded"}); !r.OK {
		t.Fatalf("the running job of a paused lane could not finish: %+v", r)
	}
	if ls := h.lease(w, 2); len(ls) != 1 || ls[0].Job.ID != other.ID {
		t.Fatalf("leases with batch paused: %+v, want only %s", ls, other.ID)
	}
	h.key = "admin-key-0123456789"
	var x api.Explanation
	if h.do("GET", "/jobs/"+queued.ID+"/explain", nil, &x); x.Code != "lane_paused" {
		t.Errorf("explain of a job in a paused lane: %+v", x)
	}

	h.stop()
	h = startHarness(t, cfg, h.path, h.clock)
	h.key = "admin-key-0123456789"
	var lanes api.LaneList
	h.do("GET", "/lanes", nil, &lanes)
	i := slices.IndexFunc(lanes.Lanes, func(l api.LaneInfo) bool { return l.Name == "batch" })
	if i < 0 || !lanes.Lanes[i].Paused || lanes.Lanes[i].PauseNote != "db migration" {
		t.Fatalf("after a restart: %+v, want batch paused", lanes.Lanes)
	}
	h.key = "worker-key-0123456789"
	if ls := h.lease(w, 2); len(ls) != 0 {
		t.Fatalf("leases after a restart with batch paused: %+v", ls)
	}
	h.key = "admin-key-0123456789"
	if code := h.do("POST", "/lanes/batch/resume", nil, &r); code != http.StatusOK || r.Result != api.ResultResumed || r.Lane.Paused {
		t.Fatalf("resume: HTTP %d %+v", code, r)
	}
	h.key = "worker-key-0123456789"
	if ls := h.lease(w, 2); len(ls) != 1 || ls[0].Job.ID != queued.ID {
		t.Fatalf("leases after resume: %+v, want %s", ls, queued.ID)
	}
}
