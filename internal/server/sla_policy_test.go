package server

import (
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Issue 28 item 5: past its max time, a warning_only job records an
// sla_warning (what docs/operations.md promises: warnings only), a
// flexible one an sla_violation; neither is stopped.
func TestSLAWarningOnlyRecordsWarningsOnly(t *testing.T) {
	for policy, want := range map[string]string{"warning_only": "sla_warning", "flexible": "sla_violation"} {
		t.Run(policy, func(t *testing.T) {
			h := newHarness(t, defaultConfig())
			w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
			j := h.submit(api.JobSpec{Type: "t", TimeoutMS: 5000, SLAPolicy: policy})
			h.lease(w, 1)
			h.start(w, j.ID, 1)
			h.clock.Advance(6 * time.Second)
			h.heartbeat(w, j.ID, 1)
			h.tick()
			evs := h.events(j.ID)
			if !slices.Contains(evs, want) {
				t.Errorf("%s past its max time: events %v, want %s", policy, evs, want)
			}
			if policy == "warning_only" && slices.Contains(evs, "sla_violation") {
				t.Errorf("warning_only recorded an sla_violation: %v", evs)
			}
			if got := h.get(j.ID); got.State != api.StateRunning || got.CancelRequested {
				t.Errorf("%s job after its max time: %s (cancel requested %v), want running", policy, got.State, got.CancelRequested)
			}
		})
	}
}
