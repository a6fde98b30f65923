package server

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// With both slots running fresh jobs, a pending job's estimated start is
// when the first of them is expected to end (their timeout, nothing being
// learned yet), not now.
func TestExplainEstimateCountsTheRunningJobs(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	t0 := h.clock.Now()
	for range 2 {
		h.submit(api.JobSpec{Type: "sleep", TimeoutMS: 60_000})
	}
	for _, l := range h.lease(w, 2) {
		h.start(w, l.Job.ID, l.Attempt)
	}
	waiting := h.submit(api.JobSpec{Type: "sleep", TimeoutMS: 60_000})
	h.clock.Advance(2 * time.Second)
	var x api.Explanation
	h.do("GET", "/jobs/"+waiting.ID+"/explain", nil, &x)
	if x.EstimatedStart == nil || !x.EstimatedStart.Equal(t0.Add(time.Minute)) || x.EstimateBasis != "timeout" {
		t.Fatalf("explain = %+v, want an estimated start at %s on the basis of the timeout", x, t0.Add(time.Minute))
	}
}
