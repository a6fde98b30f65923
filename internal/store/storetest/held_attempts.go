package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testHeldAttempts: an attempt the job row holds (package store, "The
// finished attempt in the job row") reads back as the execution row it
// replaces. Two tenants get the same jobs: "rows" writes every attempt as
// an execution row, "held" keeps each job's last one in its row. Every
// reader answers the same for both (executions, newest-first listing,
// summary, series, usage, events); an operator's retry moves the held
// attempt into an execution row in the same operation, history
// unchanged; event retention and job retention take it as they take a
// row.
func testHeldAttempts(t *testing.T, s store.Store) {
	t1, t2, t3, t4 := T0.Add(time.Second), T0.Add(2*time.Second), T0.Add(3*time.Second), T0.Add(4*time.Second)
	for _, tenant := range []string{"rows", "held"} {
		writeAttempts(t, s, tenant, t1, t2, t3, t4)
	}
	rows := func(tenant string) int {
		n := 0
		for _, id := range []string{"a", "b"} {
			execs := 0
			for _, e := range listExecs(t, s, store.ExecutionListParams{JobID: tenant + "-" + id}) {
				if e.Attempt > 0 {
					execs++
				}
			}
			n += execs
		}
		return n
	}
	if rows("rows") != 3 || rows("held") != 3 {
		t.Fatalf("attempts: %d and %d, want 3 each", rows("rows"), rows("held"))
	}
	sameForBoth(t, s, "after the end")

	// The operator retries held-b (failed): its held attempt becomes an
	// execution row, in the transition's operation.
	write(t, s, func(w store.Writer) error {
		for _, tenant := range []string{"rows", "held"} {
			if err := w.JobTransition(ctx, store.JobTransitionParams{ID: tenant + "-b", ExpectAttempt: 2,
				FromStates: []store.State{store.StateFailed}, At: t4, Set: store.JobSet{
					State: store.Ptr(store.StatePending), FinishedAt: &time.Time{}, LastError: store.Ptr(""),
					ClearExitCode: true, FailureClass: store.Ptr(store.FailureClass("")), MaxAttempts: id2(3)}}); err != nil {
				return err
			}
		}
		return nil
	})
	sameForBoth(t, s, "after the retry")
	j, err := s.JobGet(ctx, "held-b")
	if err != nil {
		t.Fatal(err)
	}
	if j.LeaseEventID != 0 || j.StartEventID != 0 || !j.LeasedAt.IsZero() || j.State != store.StatePending {
		t.Errorf("retried job still holds its attempt's events: %+v", j)
	}

	// Event retention up to t3 passes every stored event (the last is
	// 206) and clears the ids up to it wherever they are: held-a's leased
	// event (203) in its job row, held-b's first attempt's in its
	// execution row; the later ones stay. Job retention deletes held-a's
	// attempt with it.
	write(t, s, func(w store.Writer) error {
		_, err := w.EventDeleteBefore(ctx, t3, 1000)
		return err
	})
	wantIDs(t, s, "held tenant after event retention", store.EventListParams{Tenant: "held"}, []int64{207, 208, 209, 210})
	write(t, s, func(w store.Writer) error {
		_, err := w.JobDeleteFinished(ctx, t4.Add(time.Hour), 1000)
		return err
	})
	if got := listExecs(t, s, store.ExecutionListParams{JobID: "held-a"}); len(got) != 0 {
		t.Errorf("deleted job's attempts: %+v", got)
	}
	if got := listExecs(t, s, store.ExecutionListParams{Tenant: "held"}); len(got) != 2 {
		t.Errorf("held tenant's finished attempts after retention: %d, want 2 (held-b's, both rows)", len(got))
	}
}

// writeAttempts writes tenant's jobs: a (one attempt, succeeded, started
// with its completion, usage and SLA measured) and b (failed and retried,
// then failed for good). Event ids are 100 apart per tenant.
func writeAttempts(t *testing.T, s store.Store, tenant string, t1, t2, t3, t4 time.Time) {
	var base int64 = 100
	if tenant == "held" {
		base = 200
	}
	held := tenant == "held"
	a, b := newJob(tenant+"-a", tenant, T0), newJob(tenant+"-b", tenant, T0)
	a.SubmitEventID, b.SubmitEventID, a.SubmitActor, b.SubmitActor = base+1, base+2, "open", "open"
	insert(t, s, a, b)
	running := store.StateRunning
	lease := func(w store.Writer, id string, attempt int, ev int64, at time.Time) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: id, ExpectAttempt: attempt - 1, At: at,
			FromStates: []store.State{store.StatePending}, Set: store.JobSet{State: &running, Attempt: id2(attempt),
				WorkerID: store.Ptr("w1"), StartedAt: &at, LeaseEventID: &ev, LeasedAt: &at}})
	}
	var none int64
	end := func(w store.Writer, e store.Execution, state store.State, keep bool) error {
		set := store.JobSet{State: &state, FinishedAt: &e.FinishedAt, LastError: &e.Error, StartedAt: &e.StartedAt}
		if e.ExitCode != nil {
			set.ExitCode = e.ExitCode
		}
		if e.FailureClass != "" {
			set.FailureClass = &e.FailureClass
		}
		if keep {
			set.HeldAttempt = &e
			if e.StartEventID != 0 {
				set.StartEventID, set.StartEventAt = &e.StartEventID, &e.StartEventAt
			}
		} else {
			set.LeaseEventID, set.StartEventID, set.LeasedAt, set.StartEventAt = &none, &none, &time.Time{}, &time.Time{}
		}
		// Batched, as the dispatcher writes it (PostgreSQL: one UPDATE
		// ... FROM (VALUES ...) for the transitions of one shape).
		if err := w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: e.JobID, ExpectAttempt: e.Attempt, At: e.FinishedAt,
			FromStates: []store.State{store.StateRunning}, Set: set}); err != nil {
			return err
		}
		if keep {
			return nil
		}
		return w.ExecutionUpsertMany(ctx, []store.Execution{e})
	}
	ea := store.Execution{JobID: a.ID, Attempt: 1, WorkerID: "w1", LeasedAt: t1, Wait: 1500 * time.Millisecond,
		StartedAt: t1.Add(300 * time.Millisecond), FinishedAt: t3, Outcome: store.OutcomeSucceeded, ExitCode: store.Ptr(0),
		Duration: 1700 * time.Millisecond, SLAMet: store.Ptr(false), SLAViolationPct: 12.5,
		Usage:        store.Usage{CPUUser: 1500 * time.Millisecond, CPUSystem: 250 * time.Microsecond, PeakRSSBytes: 3 << 30, Source: "cgroup"},
		LeaseEventID: base + 3, StartEventID: base + 7, EndEventID: base + 8}
	eb1 := store.Execution{JobID: b.ID, Attempt: 1, WorkerID: "w1", LeasedAt: t1, StartedAt: t1, FinishedAt: t2,
		Outcome: store.OutcomeFailed, ExitCode: store.Ptr(3), FailureClass: store.FailExitCode, Error: "exit 3",
		Duration: time.Second, LeaseEventID: base + 4, StartEventID: base + 5, StartEventAt: t1.Add(time.Millisecond)}
	eb2 := store.Execution{JobID: b.ID, Attempt: 2, WorkerID: "w1", LeasedAt: t3, StartedAt: t3, FinishedAt: t4,
		Outcome: store.OutcomeFailed, ExitCode: store.Ptr(4), FailureClass: store.FailExitCode, Error: "exit 4",
		Duration: time.Second, LeaseEventID: base + 9, EndEventID: base + 10}
	write(t, s, func(w store.Writer) error {
		if err := lease(w, a.ID, 1, base+3, t1); err != nil {
			return err
		}
		if err := lease(w, b.ID, 1, base+4, t1); err != nil {
			return err
		}
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: b.ID, ExpectAttempt: 1, At: t1, Set: store.JobSet{
			StartEventID: &eb1.StartEventID, StartEventAt: &eb1.StartEventAt}}); err != nil {
			return err
		}
		if err := end(w, eb1, store.StateRetryWait, false); err != nil {
			return err
		}
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: b.ID, ExpectAttempt: 1, At: t2,
			FromStates: []store.State{store.StateRetryWait}, Set: store.JobSet{State: store.Ptr(store.StatePending)}}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{withSynth(store.JobSubmittedEvent(a)), withSynth(store.JobSubmittedEvent(b)),
			withSynth(store.LeasedEvent(base+3, a.ID, 1, tenant, t1, "w1")), withSynth(store.LeasedEvent(base+4, b.ID, 1, tenant, t1, "w1")),
			withSynth(store.StartedEvent(base+5, b.ID, 1, tenant, eb1.StartEventAt, "w1", time.Time{})),
			{ID: base + 6, JobID: b.ID, Attempt: 1, Tenant: tenant, Type: store.EventRetryScheduled, At: t2, Actor: "system"}})
	})
	write(t, s, func(w store.Writer) error {
		if err := lease(w, b.ID, 2, base+9, t3); err != nil {
			return err
		}
		if err := end(w, ea, store.StateSucceeded, held); err != nil {
			return err
		}
		if err := end(w, eb2, store.StateFailed, held); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			withSynth(store.StartedEvent(base+7, a.ID, 1, tenant, t3, "w1", ea.StartedAt)),
			withSynth(store.OutcomeEvent(base+8, tenant, ea)),
			withSynth(store.LeasedEvent(base+9, b.ID, 2, tenant, t3, "w1")),
			withSynth(store.OutcomeEvent(base+10, tenant, eb2))})
	})
}

func listExecs(t *testing.T, s store.Store, p store.ExecutionListParams) []store.Execution {
	t.Helper()
	got, err := s.ExecutionList(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sameForBoth compares every reader's answer for the tenants "rows" and
// "held", their names and event ids mapped.
func sameForBoth(t *testing.T, s store.Store, when string) {
	t.Helper()
	rename := func(id string) string { return strings.Replace(id, "held-", "rows-", 1) }
	execs := func(p store.ExecutionListParams, tenant string) []store.Execution {
		out := listExecs(t, s, p)
		for i := range out {
			out[i].JobID = rename(out[i].JobID)
			for _, id := range []*int64{&out[i].LeaseEventID, &out[i].StartEventID, &out[i].EndEventID} {
				if tenant == "held" && *id != 0 {
					*id -= 100
				}
			}
		}
		return out
	}
	for _, id := range []string{"a", "b"} {
		diff(t, when+": executions of "+id, execs(store.ExecutionListParams{JobID: "rows-" + id}, "rows"),
			execs(store.ExecutionListParams{JobID: "held-" + id}, "held"))
		diff(t, when+": executions of "+id+" after 1", execs(store.ExecutionListParams{JobID: "rows-" + id, AfterAttempt: 1}, "rows"),
			execs(store.ExecutionListParams{JobID: "held-" + id, AfterAttempt: 1}, "held"))
		diff(t, when+": events of "+id, events(t, s, store.EventListParams{JobID: "rows-" + id}),
			events(t, s, store.EventListParams{JobID: "held-" + id}))
	}
	for _, p := range []store.ExecutionListParams{{}, {Limit: 2}, {FinishedAfter: T0.Add(2500 * time.Millisecond)},
		{Outcomes: []store.Outcome{store.OutcomeFailed}}} {
		r, h := p, p
		r.Tenant, h.Tenant = "rows", "held"
		diff(t, when+": finished attempts", execs(r, "rows"), execs(h, "held"))
	}
	diff(t, when+": tenant's events", events(t, s, store.EventListParams{Tenant: "rows"}),
		events(t, s, store.EventListParams{Tenant: "held"}))
	diff(t, when+": tenant's outcome events", events(t, s, store.EventListParams{Tenant: "rows", AfterID: 104,
		Types: []store.EventType{store.EventSucceeded, store.EventFailed, store.EventStarted}, Newest: true}),
		events(t, s, store.EventListParams{Tenant: "held", AfterID: 204,
			Types: []store.EventType{store.EventSucceeded, store.EventFailed, store.EventStarted}, Newest: true}))

	for _, jobID := range []string{"", "-a"} {
		sum := func(tenant string) store.Summary {
			p := store.SummaryParams{Tenant: tenant}
			if jobID != "" {
				p = store.SummaryParams{JobID: tenant + jobID}
			}
			got, err := s.ExecutionSummary(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		diff(t, when+": summary "+jobID, sum("rows"), sum("held"))
	}
	series := func(tenant string) []store.SeriesPoint {
		got, err := s.ExecutionSeries(ctx, store.SeriesParams{Tenant: tenant, Since: T0, Until: T0.Add(10 * time.Second), Step: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	diff(t, when+": series", series("rows"), series("held"))
	usage := func(tenant string) []store.UsageRow {
		got, err := s.ExecutionUsage(ctx, store.UsageParams{By: store.UsageByLane, Tenant: tenant,
			FinishedAfter: T0.Add(-time.Hour), FinishedBefore: T0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	diff(t, when+": usage", usage("rows"), usage("held"))
	last, err := s.EventLastID(ctx)
	if err != nil || last < 210 {
		t.Errorf("%s: last event id %d (%v), want at least 210 (the held attempt's outcome)", when, last, err)
	}
}

// events lists p's events with tenants, job names and ids mapped to
// those of "rows".
func events(t *testing.T, s store.Store, p store.EventListParams) []store.Event {
	t.Helper()
	got, err := s.EventList(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i].Tenant == "held" {
			got[i].ID -= 100
		}
		got[i].JobID = strings.Replace(got[i].JobID, "held-", "rows-", 1)
		got[i].Tenant = "rows"
		got[i].Detail = []byte(strings.ReplaceAll(string(got[i].Detail), "held", "rows"))
	}
	return got
}
