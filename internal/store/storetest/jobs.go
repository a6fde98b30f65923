package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// fullJob sets every field of a job to a non-zero value.
func fullJob(id string) store.Job {
	us := func(n int) time.Time { return T0.Add(time.Duration(n) * time.Microsecond) }
	return store.Job{
		ID:             id,
		Tenant:         "acme",
		Name:           "nightly rebalance",
		Type:           "rebalance",
		Lane:           "batch",
		Key:            "portfolio/42",
		FairnessKey:    "team-risk",
		Priority:       750,
		OnDemand:       true,
		Resources:      policy.Resources{MilliCPU: 4000, MemoryMB: 8192, GPU: 1},
		Labels:         []string{"linux", "gpu"},
		Command:        []string{"python", "/app/rebalance.py", "--dry-run=false", "ünïcode ✓"},
		Env:            map[string]string{"MODE": "full", "EMPTY": ""},
		Dir:            "/srv/app",
		Shell:          true,
		Payload:        []byte{0, 1, 2, 0xff, 'x'},
		IdempotencyKey: "req-7f3a",
		State:          store.StateRunning,
		Attempt:        3,
		ReturnedLeases: 1,
		MaxAttempts:    5,
		Retry: store.RetryPolicy{
			Kind: store.RetryExponential, Delay: 1500 * time.Millisecond, MaxDelay: 10 * time.Minute,
			Jitter: true, RetryOn: []store.FailureClass{store.FailLostWorker, store.FailOOM},
		},
		Timeout:   time.Hour,
		Expected:  20 * time.Minute,
		SLAPolicy: store.SLAFlexible,
		RunAt:     us(1),
		DependsOn: []store.Dependency{
			{JobID: "dep-a", Condition: store.CondSuccess},
			{JobID: "dep-b", Condition: store.CondAny},
		},
		ScheduleID:      "sched-1",
		ScheduledFor:    us(8),
		Tags:            []string{"nightly", "team:data"},
		NotPreemptible:  true,
		TraceParent:     "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		OutputLimit:     64 << 10,
		CreatedAt:       us(2),
		UpdatedAt:       us(3),
		EnqueuedAt:      us(4),
		StartedAt:       us(5),
		FinishedAt:      us(6),
		WorkerID:        "worker-9",
		LeaseExpiresAt:  us(7),
		CancelRequested: true,
		LastError:       "exit status 3",
		ExitCode:        store.Ptr(3),
		FailureClass:    store.FailExitCode,
		Result:          []byte(`{"rows":12}`),
		SubmitEventID:   41,
		SubmitActor:     "tenant:acme key 1a2b (ci)",
		SubmitPriority:  store.Ptr(3),
	}
}

func testJobRoundTrip(t *testing.T, s store.Store) {
	want := fullJob("job-full")
	insert(t, s, want)
	diff(t, "JobGet", want, get(t, s, want.ID))

	page, err := s.JobList(ctx, store.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "JobList", []store.Job{want}, page.Jobs)
}

func testJobRoundTripMinimal(t *testing.T, s store.Store) {
	want := store.Job{ID: "job-min", Tenant: "t", Type: "x", State: store.StateBlocked, CreatedAt: T0}
	insert(t, s, want)
	got := get(t, s, want.ID)
	diff(t, "JobGet", want, got)
	if got.ExitCode != nil || got.Labels != nil || got.Env != nil || got.Payload != nil || got.DependsOn != nil {
		t.Errorf("empty optional fields came back non-nil: %+v", got)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt location %v, want UTC", got.CreatedAt.Location())
	}
}

func testJobTimePrecision(t *testing.T, s store.Store) {
	j := newJob("job-ns", "t", T0.Add(1234567891*time.Nanosecond).In(time.FixedZone("X", 3600)))
	j.Timeout = 1500*time.Millisecond + 999*time.Microsecond
	insert(t, s, j)
	got := get(t, s, j.ID)
	if want := T0.Add(1234567 * time.Microsecond); !got.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v (truncated to microseconds)", got.CreatedAt, want)
	}
	if got.Timeout != 1500*time.Millisecond {
		t.Errorf("Timeout = %v, want 1.5s (truncated to milliseconds)", got.Timeout)
	}
}

// A job's AsStored is what a read of its row returns (the dispatcher
// lists unfinished jobs from memory with it), for a full job and for one
// with sub-microsecond times, a zone, and empty lists and maps.
func testJobAsStored(t *testing.T, s store.Store) {
	full := fullJob("job-as-stored")
	odd := newJob("job-as-stored-2", "t", T0.Add(1234567891*time.Nanosecond).In(time.FixedZone("X", 3600)))
	odd.Timeout, odd.Expected = 1500*time.Millisecond+999*time.Microsecond, 2*time.Second+time.Nanosecond
	odd.Labels, odd.Tags, odd.Command, odd.Env, odd.Payload = []string{}, []string{}, []string{}, map[string]string{}, []byte{}
	odd.DependsOn, odd.Result = []store.Dependency{}, []byte{}
	odd.RunAt, odd.UpdatedAt = T0.Add(time.Hour+time.Nanosecond), T0.Add(999*time.Nanosecond)
	for _, j := range []store.Job{full, odd} {
		insert(t, s, j)
		diff(t, "JobGet against AsStored", j.AsStored(), get(t, s, j.ID))
	}
}

func testJobInsertExists(t *testing.T, s store.Store) {
	insert(t, s, newJob("job-1", "t", T0))
	write(t, s, func(w store.Writer) error {
		dup := newJob("job-1", "other", T0.Add(time.Second))
		wantErr(t, "second insert", w.JobInsert(ctx, dup), store.ErrExists)
		return nil
	})
	if got := get(t, s, "job-1"); got.Tenant != "t" {
		t.Errorf("tenant = %q after failed overwrite", got.Tenant)
	}
}

func testJobInsertInvalid(t *testing.T, s store.Store) {
	bad := map[string]func(j *store.Job){
		"no id":      func(j *store.Job) { j.ID = "" },
		"no tenant":  func(j *store.Job) { j.Tenant = "" },
		"no type":    func(j *store.Job) { j.Type = "" },
		"bad state":  func(j *store.Job) { j.State = "zombie" },
		"no created": func(j *store.Job) { j.CreatedAt = time.Time{} },
		"bad retry":  func(j *store.Job) { j.Retry.Kind = "sometimes" },
		"bad sla":    func(j *store.Job) { j.SLAPolicy = "lax" },
		"bad dep":    func(j *store.Job) { j.DependsOn = []store.Dependency{{JobID: "x", Condition: "maybe"}} },
	}
	write(t, s, func(w store.Writer) error {
		for name, mod := range bad {
			j := newJob("job-bad", "t", T0)
			mod(&j)
			if err := w.JobInsert(ctx, j); !errors.Is(err, store.ErrInvalid) {
				t.Errorf("%s: got %v, want ErrInvalid", name, err)
			}
		}
		return w.JobInsert(ctx, newJob("job-ok", "t", T0)) // the transaction is still good
	})
	get(t, s, "job-ok")
}

func testJobGetNotFound(t *testing.T, s store.Store) {
	_, err := s.JobGet(ctx, "nope")
	wantErr(t, "JobGet", err, store.ErrNotFound)
}

func testJobGetMany(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "t", T0), newJob("b", "t", T0), newJob("c", "t", T0))
	got, err := s.JobGetMany(ctx, []string{"c", "missing", "a", "c"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ids", []string{"c", "a"}, ids(got))
	got, err = s.JobGetMany(ctx, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("JobGetMany(nil) = %v, %v", got, err)
	}
}

func testJobListUnfinished(t *testing.T, s store.Store) {
	var jobs []store.Job
	var want []string
	for i, st := range store.AllStates() {
		j := newJob("job-"+string(st), "t", T0.Add(time.Duration(len(store.AllStates())-i)*time.Second))
		j.State = st
		jobs = append(jobs, j)
		if !st.Terminal() {
			want = append([]string{j.ID}, want...) // created in reverse: oldest last in AllStates
		}
	}
	insert(t, s, jobs...)
	got, err := s.JobListUnfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "unfinished ids (oldest first)", want, ids(got))
	diff(t, "first job", jobs[4], got[0])
}

// Retention deletes a job's spec with the job (store doc.go, "The job's
// spec lives beside the hot row"): the ids of deleted jobs, inserted
// again, one at a time and batched, are free in job_specs too and read
// back the new spec. A spec left behind would make the insert a unique
// violation (ErrExists) or, read back, show the old spec.
func testJobDeleteFinishedTakesTheSpec(t *testing.T, s store.Store) {
	old := T0.Add(-48 * time.Hour)
	var gone []store.Job
	for i := range 4 {
		j := newJob(jobID("gone", i), "t", old)
		j.Command, j.Env, j.Payload, j.Tags = []string{"echo", "gone"}, map[string]string{"A": "1"}, []byte("gone"), []string{"gone"}
		j.State, j.FinishedAt = store.StateSucceeded, old.Add(time.Minute)
		gone = append(gone, j)
	}
	insert(t, s, gone[:2]...)
	write(t, s, func(w store.Writer) error {
		for _, j := range gone[2:] {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	write(t, s, func(w store.Writer) error {
		p, err := w.JobDeleteFinished(ctx, T0.Add(-time.Hour), 10)
		if err == nil && p.Deleted != int64(len(gone)) {
			t.Errorf("retention deleted %d jobs, want %d", p.Deleted, len(gone))
		}
		return err
	})
	again := make([]store.Job, len(gone))
	for i := range gone {
		j := newJob(gone[i].ID, "t", T0)
		j.Command, j.Payload, j.Tags = []string{"echo", "again"}, []byte("again"), []string{"again"}
		again[i] = j
	}
	insert(t, s, again[0], again[2])
	write(t, s, func(w store.Writer) error {
		for _, j := range []store.Job{again[1], again[3]} {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	for _, j := range again {
		diff(t, "the job inserted again "+j.ID, j.AsStored(), get(t, s, j.ID))
	}
}

func testJobDeleteFinished(t *testing.T, s store.Store) {
	old := T0.Add(-48 * time.Hour)
	var jobs []store.Job
	for i, st := range []store.State{store.StateSucceeded, store.StateFailed, store.StateCancelled, store.StateRunning} {
		j := newJob(jobID("old", i), "t", old)
		j.State, j.FinishedAt = st, old.Add(time.Minute)
		jobs = append(jobs, j)
	}
	jobs[0].IdempotencyKey = "k"
	jobs[0].CreatedAt = T0.Add(-time.Hour) // its key is still inside the window
	recent := newJob("recent", "t", T0)
	recent.State, recent.FinishedAt = store.StateSucceeded, T0
	jobs = append(jobs, recent)
	insert(t, s, jobs...)
	write(t, s, func(w store.Writer) error {
		if err := w.ExecutionUpsert(ctx, store.Execution{JobID: jobID("old", 0), Attempt: 1, Outcome: store.OutcomeSucceeded,
			FinishedAt: old}); err != nil {
			return err
		}
		if err := w.LogAppend(ctx, []store.LogChunk{{JobID: jobID("old", 0), Attempt: 1, Stream: store.Stdout, Seq: 1, At: old, Data: []byte("x")}}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{{JobID: jobID("old", 0), Type: store.EventSucceeded, At: old}})
	})

	var p store.Purged
	write(t, s, func(w store.Writer) (err error) {
		p, err = w.JobDeleteFinished(ctx, T0.Add(-time.Hour), 2)
		return err
	})
	// Three were due: the limit deleted two, and the third is the backlog.
	if want := (store.Purged{Deleted: 2, NextAt: old.Add(time.Minute)}); p != want {
		t.Fatalf("first delete: %+v, want %+v", p, want)
	}
	write(t, s, func(w store.Writer) (err error) {
		p, err = w.JobDeleteFinished(ctx, T0.Add(-time.Hour), 100)
		return err
	})
	if want := (store.Purged{Deleted: 1}); p != want {
		t.Fatalf("second delete: %+v, want %+v", p, want)
	}
	left, err := s.JobList(ctx, store.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "jobs left", []string{"recent", jobID("old", 3)}, ids(left.Jobs))
	execs, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: jobID("old", 0)})
	if err != nil || len(execs) != 0 {
		t.Errorf("executions of deleted job: %v, %v", execs, err)
	}
	logs, err := s.LogList(ctx, store.LogListParams{JobID: jobID("old", 0)})
	if err != nil || len(logs) != 0 {
		t.Errorf("logs of deleted job: %v, %v", logs, err)
	}
	events, err := s.EventList(ctx, store.EventListParams{JobID: jobID("old", 0)})
	if err != nil || len(events) != 1 {
		t.Errorf("events of deleted job: %v, %v (want kept)", events, err)
	}
	// The deleted job's idempotency claim stays for its window: a job
	// deleted by retention is still deduplicated.
	holder, err := s.IdempotencyHolder(ctx, "t", "k", T0.Add(-store.IdempotencyWindow))
	if err != nil || holder != jobID("old", 0) {
		t.Fatalf("holder of the deleted job's key: %q, %v; want %s", holder, err, jobID("old", 0))
	}
	if _, err := s.IdempotencyHolder(ctx, "t", "k", T0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("holder of a key claimed before createdAfter: %v, want ErrNotFound", err)
	}
	again := newJob("again", "t", T0)
	again.IdempotencyKey = "k"
	var dup *store.DuplicateError
	err = s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, again) })
	if !errors.As(err, &dup) || dup.JobID != jobID("old", 0) {
		t.Fatalf("insert with the key of a deleted job: %v, want a duplicate of %s", err, jobID("old", 0))
	}
	// Once the window has passed, the key is free.
	again.CreatedAt = jobs[0].CreatedAt.Add(store.IdempotencyWindow)
	insert(t, s, again)
}
