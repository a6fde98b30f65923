package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func testSeries(t *testing.T, s store.Store) {
	a, b := newJob("a", "acme", T0), newJob("b", "globex", T0)
	b.Lane = "batch"
	insert(t, s, a, b)
	var es []store.Execution
	add := func(job string, leased time.Duration, wait time.Duration, finished time.Duration, outcome store.Outcome) {
		e := store.Execution{JobID: job, Attempt: len(es) + 1, LeasedAt: T0.Add(leased), Wait: wait, Outcome: outcome}
		if outcome != "" {
			e.FinishedAt = T0.Add(finished)
		}
		es = append(es, e)
	}
	// Minute 0: ten leases of acme with waits 100ms..1s; nine succeed in
	// minute 1 and one fails there.
	for i := range 10 {
		outcome := store.OutcomeSucceeded
		if i == 9 {
			outcome = store.OutcomeFailed
		}
		add("a", time.Duration(i)*time.Second, time.Duration(i+1)*100*time.Millisecond, 70*time.Second, outcome)
	}
	// Minute 2: one globex lease waiting 2 minutes, still running; one
	// leased at once, lost in minute 2; one never leased (no wait), lost
	// in minute 3.
	add("b", 125*time.Second, 2*time.Minute, 0, "")
	add("b", 130*time.Second, 0, 150*time.Second, store.OutcomeLost)
	add("b", 0, 0, 190*time.Second, store.OutcomeLost)
	es[len(es)-1].LeasedAt = time.Time{}
	// Outside the range: counted nowhere.
	add("b", -time.Second, time.Second, 5*time.Minute, store.OutcomeSucceeded)
	upsertExecutions(t, s, es...)

	p := store.SeriesParams{Since: T0, Until: T0.Add(4 * time.Minute), Step: time.Minute}
	got, err := s.ExecutionSeries(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d points, want 4", len(got))
	}
	for i, pt := range got {
		if !pt.Start.Equal(T0.Add(time.Duration(i) * time.Minute)) {
			t.Errorf("point %d starts at %s", i, pt.Start)
		}
	}
	diff(t, "minute 0 finished", map[store.Outcome]int64{}, got[0].Finished)
	diff(t, "minute 1 finished", map[store.Outcome]int64{store.OutcomeSucceeded: 9, store.OutcomeFailed: 1}, got[1].Finished)
	diff(t, "minute 2 finished", map[store.Outcome]int64{store.OutcomeLost: 1}, got[2].Finished)
	w := got[0]
	if w.Leased != 10 || w.WaitMean != 550*time.Millisecond || w.WaitMax != time.Second {
		t.Errorf("minute 0 waits: leased %d, mean %s, max %s; want 10, 550ms, 1s", w.Leased, w.WaitMean, w.WaitMax)
	}
	// Histogram estimates: five waits ≤ 500ms (bucket 250-500ms holds
	// 300, 400, 500), so the median interpolates to 500ms; the 95th is
	// inside the 500ms-1s bucket, capped by the max.
	if w.WaitP50 != 500*time.Millisecond || w.WaitP95 <= 900*time.Millisecond || w.WaitP95 > time.Second {
		t.Errorf("minute 0 percentiles: p50 %s, p95 %s; want 500ms and (900ms, 1s]", w.WaitP50, w.WaitP95)
	}
	if got[2].Leased != 2 || got[2].WaitMax != 2*time.Minute || got[2].WaitMean != time.Minute || got[1].Leased != 0 || got[3].Leased != 0 {
		t.Errorf("leases per minute: %d %d %d %d (minute 2: mean %s, max %s); want 10 0 2 0 (1m, 2m)",
			got[0].Leased, got[1].Leased, got[2].Leased, got[3].Leased, got[2].WaitMean, got[2].WaitMax)
	}
	diff(t, "minute 3 finished", map[store.Outcome]int64{store.OutcomeLost: 1}, got[3].Finished)

	// Filters go through the job.
	got, err = s.ExecutionSeries(ctx, store.SeriesParams{Since: T0, Until: T0.Add(4 * time.Minute), Step: 2 * time.Minute, Tenant: "globex"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Leased != 0 || len(got[0].Finished) != 0 || got[1].Leased != 2 || got[1].Finished[store.OutcomeLost] != 2 {
		t.Errorf("globex series: %+v", got)
	}
	got, err = s.ExecutionSeries(ctx, store.SeriesParams{Since: T0, Until: T0.Add(4 * time.Minute), Step: 4 * time.Minute, Lane: "batch"})
	if err != nil || len(got) != 1 || got[0].Leased != 2 {
		t.Errorf("lane batch series: %+v, %v", got, err)
	}

	for name, bad := range map[string]store.SeriesParams{
		"empty range": {Since: T0, Until: T0, Step: time.Minute},
		"no start":    {Until: T0, Step: time.Minute},
		"tiny step":   {Since: T0, Until: T0.Add(time.Hour), Step: time.Millisecond},
		"too many":    {Since: T0, Until: T0.Add(25 * time.Hour), Step: time.Minute},
		"backwards":   {Since: T0.Add(time.Hour), Until: T0, Step: time.Minute},
	} {
		_, err := s.ExecutionSeries(ctx, bad)
		wantErr(t, name, err, store.ErrInvalid)
	}
}
