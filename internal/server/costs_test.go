package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// GET /lanes?costs=true shows what fair queuing ranks by: a key charged
// for a run has its accumulated cost, the (type, key) its learned run
// time, folded with alpha; tenant keys are refused, since fairness keys
// are shared.
func TestLanesCostsShowWhatFairQueuingRanksBy(t *testing.T) {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{"acme": {APIKeys: []string{"acme-key-0123456789"}}}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	cfg.Cost.Alpha = 0.5
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	j := h.submit(api.JobSpec{Type: "report", Key: "acct-42", FairnessKey: "user-7"})
	h.submit(api.JobSpec{Type: "report", Key: "acct-43", FairnessKey: "user-8"})
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	l := h.lease(w, 1)
	if len(l) != 1 || l[0].Job.ID != j.ID {
		t.Fatalf("leased %+v, want %s", l, j.ID)
	}
	h.start(w, j.ID, 1)
	h.clock.Advance(5 * time.Second)
	h.complete(w, api.Completion{JobID: j.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})

	h.key = "admin-key-0123456789"
	var out api.LaneList
	if code := h.do("GET", "/lanes?costs=true", nil, &out); code != http.StatusOK || out.Costs == nil {
		t.Fatalf("HTTP %d, costs %v", code, out.Costs)
	}
	c := out.Costs
	// each key is charged its job's cost when the job starts (the default,
	// 1 s, as nothing was learned yet): user-8's job started when user-7's
	// ended; equal costs rank by name
	idle := h.clock.Now().UTC()
	wantKeys := []api.FairKeyCost{{Key: "user-7", Cost: 1, IdleSince: &idle}, {Key: "user-8", Cost: 1, Jobs: 1}}
	if diff := cmp.Diff(wantKeys, c.FairnessKeys); diff != "" {
		t.Errorf("fairness keys (-want +got)\n%s", diff)
	}
	// learned: 0.5·5 s observed + 0.5·default 1 s = 3 s
	if len(c.Learned) != 1 || c.Learned[0].Type != "report" || c.Learned[0].Key != "acct-42" || c.Learned[0].Seconds != 3 || c.Alpha != 0.5 {
		t.Errorf("learned %+v (alpha %v), want report/acct-42 at 3 s", c.Learned, c.Alpha)
	}
	var plain api.LaneList
	if code := h.do("GET", "/lanes", nil, &plain); code != http.StatusOK || plain.Costs != nil {
		t.Errorf("without costs=true: HTTP %d, costs %+v", code, plain.Costs)
	}
	h.key = "acme-key-0123456789"
	var e api.ErrorResponse
	if code := h.do("GET", "/lanes?costs=true", nil, &e); code != http.StatusForbidden || e.Error.Code != api.CodePermissionDenied {
		t.Errorf("tenant key: HTTP %d %+v, want 403 permission_denied", code, e)
	}
	if code := h.do("GET", "/lanes?costs=maybe", nil, &e); code != http.StatusBadRequest || e.Error.Field != "costs" {
		t.Errorf("costs=maybe: HTTP %d %+v, want 400 on the field costs", code, e)
	}
}
