package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func upsertExecutions(t *testing.T, s store.Store, es ...store.Execution) {
	t.Helper()
	write(t, s, func(w store.Writer) error {
		for _, e := range es {
			if err := w.ExecutionUpsert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func testExecutions(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	first := store.Execution{JobID: "j", Attempt: 1, WorkerID: "w1", LeasedAt: T0.Add(time.Second), Wait: 1500 * time.Millisecond}
	second := store.Execution{
		JobID: "j", Attempt: 2, WorkerID: "w2", LeasedAt: T0.Add(time.Minute), StartedAt: T0.Add(61 * time.Second),
		FinishedAt: T0.Add(2 * time.Minute), Outcome: store.OutcomeSucceeded, ExitCode: store.Ptr(0),
		Duration: 59 * time.Second, SLAMet: store.Ptr(true),
	}
	upsertExecutions(t, s, second, first)

	// The first attempt ends: the upsert replaces the row.
	first.StartedAt, first.FinishedAt = T0.Add(2*time.Second), T0.Add(30*time.Second)
	first.Outcome, first.ExitCode, first.FailureClass = store.OutcomeFailed, store.Ptr(137), store.FailOOM
	first.Error, first.Duration, first.SLAMet, first.SLAViolationPct = "OOM killed", 28*time.Second, store.Ptr(false), 12.5
	first.Usage = store.Usage{CPUUser: 1500 * time.Millisecond, CPUSystem: 250 * time.Microsecond, PeakRSSBytes: 3 << 30, Source: "cgroup"}
	upsertExecutions(t, s, first)

	got, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "executions", []store.Execution{first, second}, got)

	write(t, s, func(w store.Writer) error {
		wantErr(t, "missing job", w.ExecutionUpsert(ctx, store.Execution{JobID: "nope", Attempt: 1}), store.ErrNotFound)
		wantErr(t, "bad outcome", w.ExecutionUpsert(ctx, store.Execution{JobID: "j", Attempt: 3, Outcome: "meh"}), store.ErrInvalid)
		wantErr(t, "negative wait", w.ExecutionUpsert(ctx, store.Execution{JobID: "j", Attempt: 3, Wait: -time.Second}), store.ErrInvalid)
		wantErr(t, "negative cpu", w.ExecutionUpsert(ctx, store.Execution{JobID: "j", Attempt: 3,
			Usage: store.Usage{CPUUser: -time.Second, Source: "rusage"}}), store.ErrInvalid)
		return nil
	})
	got, err = s.ExecutionList(ctx, store.ExecutionListParams{JobID: "nope"})
	if err != nil || len(got) != 0 {
		t.Fatalf("executions of a missing job: %v, %v", got, err)
	}
}

func testExecutionListFilters(t *testing.T, s store.Store) {
	a, b := newJob("a", "acme", T0), newJob("b", "globex", T0)
	b.Type = "encode"
	insert(t, s, a, b)
	es := []store.Execution{
		{JobID: "a", Attempt: 1, Outcome: store.OutcomeFailed, FinishedAt: T0.Add(1 * time.Minute)},
		{JobID: "a", Attempt: 2, Outcome: store.OutcomeSucceeded, FinishedAt: T0.Add(3 * time.Minute)},
		{JobID: "a", Attempt: 3}, // running: not listed without JobID
		{JobID: "b", Attempt: 1, Outcome: store.OutcomeLost, FinishedAt: T0.Add(2 * time.Minute)},
		{JobID: "b", Attempt: 2, Outcome: store.OutcomeFailed, FinishedAt: T0.Add(3 * time.Minute)},
	}
	upsertExecutions(t, s, es...)
	key := func(es []store.Execution) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.JobID+"/"+string(rune('0'+e.Attempt)))
		}
		return out
	}
	cases := map[string]struct {
		p    store.ExecutionListParams
		want []string
	}{
		"all finished, newest first": {store.ExecutionListParams{}, []string{"b/2", "a/2", "b/1", "a/1"}},
		"tenant":                     {store.ExecutionListParams{Tenant: "acme"}, []string{"a/2", "a/1"}},
		"type":                       {store.ExecutionListParams{Type: "encode"}, []string{"b/2", "b/1"}},
		"failures": {store.ExecutionListParams{Outcomes: []store.Outcome{store.OutcomeFailed, store.OutcomeLost}},
			[]string{"b/2", "b/1", "a/1"}},
		"window": {store.ExecutionListParams{FinishedAfter: T0.Add(time.Minute), FinishedBefore: T0.Add(3 * time.Minute)},
			[]string{"b/1"}},
		"limit":               {store.ExecutionListParams{Limit: 2}, []string{"b/2", "a/2"}},
		"job, every attempt":  {store.ExecutionListParams{JobID: "a"}, []string{"a/1", "a/2", "a/3"}},
		"job and outcome":     {store.ExecutionListParams{JobID: "a", Outcomes: []store.Outcome{store.OutcomeFailed}}, []string{"a/1"}},
		"job, one page":       {store.ExecutionListParams{JobID: "a", Limit: 2}, []string{"a/1", "a/2"}},
		"job, after attempt":  {store.ExecutionListParams{JobID: "a", AfterAttempt: 2, Limit: 2}, []string{"a/3"}},
		"job of other tenant": {store.ExecutionListParams{JobID: "a", Tenant: "globex"}, nil},
	}
	for name, c := range cases {
		got, err := s.ExecutionList(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diff(t, name, c.want, key(got))
	}
}

func testSummary(t *testing.T, s store.Store) {
	x, y, other := newJob("x", "acme", T0), newJob("y", "acme", T0), newJob("o", "globex", T0)
	y.Type, y.Lane = "encode", "adhoc"
	insert(t, s, x, y, other)
	var es []store.Execution
	add := func(job string, outcome store.Outcome, class store.FailureClass, ms int, sla *bool, pct float64, finished time.Duration) {
		es = append(es, store.Execution{JobID: job, Attempt: len(es) + 1, Outcome: outcome, FailureClass: class,
			Duration: time.Duration(ms) * time.Millisecond, SLAMet: sla, SLAViolationPct: pct,
			FinishedAt: T0.Add(finished)})
	}
	yes, no := store.Ptr(true), store.Ptr(false)
	// 20 executions of tenant acme with durations 100ms..2000ms.
	for i := range 14 {
		add("x", store.OutcomeSucceeded, "", 100*(i+1), yes, 0, time.Duration(i)*time.Minute)
	}
	add("x", store.OutcomeFailed, store.FailExitCode, 1500, no, 10, time.Hour)
	add("x", store.OutcomeFailed, store.FailExitCode, 1600, no, 30, time.Hour)
	add("y", store.OutcomeFailed, store.FailOOM, 1700, nil, 0, time.Hour)
	add("y", store.OutcomeTimeout, store.FailTimeout, 1800, no, 80, time.Hour)
	add("y", store.OutcomeLost, store.FailLostWorker, 1900, nil, 0, time.Hour)
	add("y", store.OutcomeCancelled, store.FailCancelled, 2000, nil, 0, time.Hour)
	add("y", "", "", 5000, nil, 0, 0) // unfinished: never counted
	es[len(es)-1].FinishedAt = time.Time{}
	add("o", store.OutcomeSucceeded, "", 99999, no, 500, time.Hour) // other tenant
	upsertExecutions(t, s, es...)

	got, err := s.ExecutionSummary(ctx, store.SummaryParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Summary{
		Executions: 20,
		ByOutcome: map[store.Outcome]int64{store.OutcomeSucceeded: 14, store.OutcomeFailed: 3,
			store.OutcomeTimeout: 1, store.OutcomeLost: 1, store.OutcomeCancelled: 1},
		ByFailureClass: map[store.FailureClass]int64{store.FailExitCode: 2, store.FailOOM: 1,
			store.FailTimeout: 1, store.FailLostWorker: 1, store.FailCancelled: 1},
		MeanDuration:        1050 * time.Millisecond, // (100+...+1400 + 1500+...+2000) / 20
		P50Duration:         1000 * time.Millisecond, // rank ceil(0.50*20) = 10
		P95Duration:         1900 * time.Millisecond, // rank ceil(0.95*20) = 19
		P99Duration:         2000 * time.Millisecond, // rank ceil(0.99*20) = 20
		SLAMeasured:         17,
		SLAMet:              14,
		MeanSLAViolationPct: 40,
		SLAMeanDuration:     906 * time.Millisecond, // (100+...+1400 + 1500 + 1600 + 1800) / 17, rounded
	}
	diff(t, "summary", want, got)
	if c := got.SLACompliance(); math.Abs(c-100*14.0/17) > 1e-9 {
		t.Errorf("SLACompliance = %v", c)
	}

	got, err = s.ExecutionSummary(ctx, store.SummaryParams{Type: "encode", Lane: "adhoc"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Executions != 4 || got.ByOutcome[store.OutcomeLost] != 1 || got.SLAMeasured != 1 || got.P95Duration != 2000*time.Millisecond {
		t.Errorf("type+lane summary: %+v", got)
	}
	got, err = s.ExecutionSummary(ctx, store.SummaryParams{Tenant: "acme", FinishedAfter: T0.Add(-time.Second),
		FinishedBefore: T0.Add(2*time.Minute + time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Executions != 3 || got.MeanDuration != 200*time.Millisecond || got.P95Duration != 300*time.Millisecond {
		t.Errorf("windowed summary: %+v", got)
	}
	got, err = s.ExecutionSummary(ctx, store.SummaryParams{Tenant: "acme", Outcome: store.OutcomeSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if got.Executions != 14 || got.P50Duration != 700*time.Millisecond || got.P99Duration != 1400*time.Millisecond {
		t.Errorf("succeeded-only summary: %+v", got)
	}
	got, err = s.ExecutionSummary(ctx, store.SummaryParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Executions != 21 || got.SLAMeasured != 18 {
		t.Errorf("unfiltered summary: %+v", got)
	}
	got, err = s.ExecutionSummary(ctx, store.SummaryParams{Breakdowns: true})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "by tenant", map[string]store.GroupSummary{
		"acme": {ByOutcome: map[store.Outcome]int64{store.OutcomeSucceeded: 14, store.OutcomeFailed: 3,
			store.OutcomeTimeout: 1, store.OutcomeLost: 1, store.OutcomeCancelled: 1}, SucceededDuration: 10500 * time.Millisecond},
		"globex": {ByOutcome: map[store.Outcome]int64{store.OutcomeSucceeded: 1}, SucceededDuration: 99999 * time.Millisecond},
	}, got.ByTenant)
	diff(t, "type encode", store.GroupSummary{ByOutcome: map[store.Outcome]int64{store.OutcomeFailed: 1,
		store.OutcomeTimeout: 1, store.OutcomeLost: 1, store.OutcomeCancelled: 1}}, got.ByType["encode"])
	if len(got.ByType) != 2 {
		t.Errorf("by type: %v, want 2 types", got.ByType)
	}
	got, err = s.ExecutionSummary(ctx, store.SummaryParams{Tenant: "globex", Breakdowns: true})
	if err != nil || len(got.ByTenant) != 1 || got.ByTenant["globex"].ByOutcome[store.OutcomeSucceeded] != 1 {
		t.Errorf("by tenant of one tenant: %+v, %v", got.ByTenant, err)
	}
}

func testSummaryEmpty(t *testing.T, s store.Store) {
	got, err := s.ExecutionSummary(ctx, store.SummaryParams{Tenant: "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Executions != 0 || got.MeanDuration != 0 || got.P95Duration != 0 || got.SLACompliance() != 100 {
		t.Errorf("empty summary: %+v", got)
	}
}
