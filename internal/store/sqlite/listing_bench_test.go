package sqlite

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
)

// BenchmarkJobListFirstPage reads the first page (50 jobs) of the
// store's listings on FAIRWAY_BENCH_JOBS jobs (1,000,000 unless set) in
// seedJobs' proportions (82% succeeded, 9% unfinished): all jobs, a
// tenant's, one terminal state, every terminal state, and running jobs
// as a server with no dispatcher reads them (store doc.go, "The hot row
// and its indexes").
func BenchmarkJobListFirstPage(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("FAIRWAY_BENCH_JOBS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	s := openTemp(b)
	defer s.Close()
	seedJobs(b, s, n)
	for _, c := range []struct {
		name string
		p    store.JobListParams
	}{
		{"all", store.JobListParams{}},
		{"tenant", store.JobListParams{Tenant: "t1"}},
		{"failed", store.JobListParams{States: []store.State{store.StateFailed}}},
		{"finished", store.JobListParams{States: store.TerminalStates()}},
		{"running", store.JobListParams{States: []store.State{store.StateRunning}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.p.Limit = 50
			for range b.N {
				page, err := s.JobList(context.Background(), c.p)
				if err != nil || len(page.Jobs) != 50 {
					b.Fatalf("%d jobs, %v", len(page.Jobs), err)
				}
			}
		})
	}
}
