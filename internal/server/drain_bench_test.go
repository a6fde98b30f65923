package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// BenchmarkDrain measures the server alone: b.N jobs are batch-submitted,
// then `pollers` workers lease, start and complete them over loopback HTTP
// in batches. It reports completed jobs per second of the drain.
func BenchmarkDrain(b *testing.B) {
	h := newHarness(b, defaultConfig())
	h.clock = nil
	h.srv.clock = realClock{}
	specs := make([]api.JobSpec, 0, 1000)
	for i := 0; i < b.N; i += len(specs) {
		specs = specs[:0]
		for j := 0; j < 1000 && i+j < b.N; j++ {
			specs = append(specs, api.JobSpec{Type: "noop"})
		}
		var r api.BatchResponse
		if code := h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: specs}, &r); code != 201 {
			b.Fatalf("batch: HTTP %d", code)
		}
	}
	const pollers, slots = 4, 25
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for p := 0; p < pollers; p++ {
		w := h.register(api.RegisterRequest{Name: "bench", Slots: slots})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var lr api.LeaseResponse
				h.do("POST", "/workers/"+w+"/lease", api.LeaseRequest{Max: slots, WaitMS: 200}, &lr)
				if len(lr.Leases) == 0 {
					mu.Lock()
					finished := done >= b.N
					mu.Unlock()
					if finished {
						return
					}
					continue
				}
				cs := make([]api.Completion, len(lr.Leases))
				for i, l := range lr.Leases {
					cs[i] = api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: "succeeded"}
				}
				h.do("POST", "/workers/"+w+"/complete", api.CompleteRequest{Results: cs}, nil)
				mu.Lock()
				done += len(cs)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")

}
