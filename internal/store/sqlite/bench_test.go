package sqlite

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// benchJob is a job of realistic size: argv, env, labels, a retry policy.
func benchJob(id string, now time.Time) store.Job {
	return store.Job{
		ID: id, Tenant: "acme", Type: "report", Lane: "batch", Key: "repo/" + id[len(id)-4:],
		Priority: 500, Resources: policy.Resources{MilliCPU: 1000, MemoryMB: 512},
		Labels: []string{"linux"}, Command: []string{"/usr/bin/report", "--since", "24h", "--format=csv"},
		Env: map[string]string{"REGION": "eu-west-1", "MODE": "full"}, State: store.StatePending,
		MaxAttempts: 3, Retry: store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second, MaxDelay: time.Minute, Jitter: true},
		Timeout: time.Hour, Expected: 10 * time.Minute, SLAPolicy: store.SLAFlexible,
		CreatedAt: now, UpdatedAt: now, EnqueuedAt: now,
	}
}

func reportRate(b *testing.B, perOp int, unit string) {
	b.ReportMetric(float64(perOp)*float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkWriteBatch: one Write (one fsync'd commit) inserting n jobs.
func BenchmarkWriteBatch(b *testing.B) {
	benchInserts(b, []int{1, 100, 1000}, store.Writer.JobInsert)
}

// BenchmarkTransitionBatch: one Write applying n fenced transitions, each
// with its audit event, as the dispatcher does: lease (pending -> leased,
// attempt+1), then on the next visit release (leased -> pending).
func BenchmarkTransitionBatch(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			s := openTemp(b)
			ctx := context.Background()
			pool := max(4*n, 2000)
			type tracked struct {
				id      string
				attempt int
				leased  bool
			}
			jobs := make([]tracked, pool)
			now := time.Now()
			if err := s.Write(ctx, func(w store.Writer) error {
				for i := range jobs {
					jobs[i].id = store.NewID(now)
					if err := w.JobInsert(ctx, benchJob(jobs[i].id, now)); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			next := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now := time.Now()
				err := s.Write(ctx, func(w store.Writer) error {
					for range n {
						j := &jobs[next%pool]
						next++
						p, ev := transitionFor(j.id, j.attempt, j.leased, now)
						if err := w.JobTransition(ctx, p); err != nil {
							return err
						}
						if err := w.EventAppend(ctx, []store.Event{ev}); err != nil {
							return err
						}
						if !j.leased {
							j.attempt++
						}
						j.leased = !j.leased
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, n, "transitions/s")
		})
	}
}

func transitionFor(id string, attempt int, leased bool, now time.Time) (store.JobTransitionParams, store.Event) {
	if !leased {
		return store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: attempt, At: now,
				Set: store.JobSet{State: store.Ptr(store.StateLeased), Attempt: store.Ptr(attempt + 1),
					WorkerID: store.Ptr("worker-1"), LeaseExpiresAt: store.Ptr(now.Add(30 * time.Second))}},
			store.Event{JobID: id, Attempt: attempt + 1, Tenant: "acme", Type: store.EventLeased, At: now, Actor: "system"}
	}
	return store.JobTransitionParams{ID: id, FromStates: []store.State{store.StateLeased}, ExpectAttempt: attempt, At: now,
			Set: store.JobSet{State: store.Ptr(store.StatePending), WorkerID: store.Ptr(""),
				LeaseExpiresAt: store.Ptr(time.Time{}), EnqueuedAt: store.Ptr(now)}},
		store.Event{JobID: id, Attempt: attempt, Tenant: "acme", Type: store.EventLeaseExpired, At: now, Actor: "system"}
}

// BenchmarkListUnfinished: the start-up scan, per 10,000 unfinished jobs.
func BenchmarkListUnfinished(b *testing.B) {
	const n = 10000
	s := openTemp(b)
	ctx := context.Background()
	now := time.Now()
	if err := s.Write(ctx, func(w store.Writer) error {
		for range n {
			if err := w.JobInsert(ctx, benchJob(store.NewID(now), now)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		jobs, err := s.JobListUnfinished(ctx)
		if err != nil || len(jobs) != n {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
	reportRate(b, n, "jobs/s")
}

// BenchmarkJobGet: one read from the pool.
func BenchmarkJobGet(b *testing.B) {
	s := openTemp(b)
	ctx := context.Background()
	now := time.Now()
	id := store.NewID(now)
	if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, benchJob(id, now)) }); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.JobGet(ctx, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkJobLifecycle replays what the dispatcher writes for one no-op
// job in a drain, batch jobs per durable Write: the lease (transition +
// event), then the end (transition, started and succeeded events,
// execution row). It reports the store's cost per job.
func BenchmarkJobLifecycle(b *testing.B) {
	for _, batch := range []int{20, 100, 400} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchLifecycle(b, batch) })
	}
}

func benchLifecycle(b *testing.B, batch int) {
	s := openTemp(b)
	ctx := context.Background()
	now := time.Now()
	ids := make([]string, b.N)
	for from := 0; from < b.N; from += 1000 {
		if err := s.Write(ctx, func(w store.Writer) error {
			for i := from; i < min(from+1000, b.N); i++ {
				ids[i] = store.NewID(now)
				j := store.Job{ID: ids[i], Tenant: "default", Type: "noop", Priority: 500, State: store.StatePending,
					MaxAttempts: 1, CreatedAt: now, UpdatedAt: now, EnqueuedAt: now}
				if err := w.JobInsert(ctx, j); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for from := 0; from < b.N; from += batch {
		to := min(from+batch, b.N)
		now := time.Now()
		err := s.Write(ctx, func(w store.Writer) error {
			var evs []store.Event
			var execs []store.Execution
			for _, id := range ids[from:to] {
				if err := w.JobTransition(ctx, store.JobTransitionParams{ID: id, FromStates: []store.State{store.StatePending}, At: now,
					Set: store.JobSet{State: store.Ptr(store.StateLeased), Attempt: store.Ptr(1), WorkerID: store.Ptr("w-1"),
						LeaseExpiresAt: store.Ptr(now.Add(30 * time.Second)), StartedAt: &time.Time{}}}); err != nil {
					return err
				}
				evs = append(evs, store.Event{JobID: id, Attempt: 1, Tenant: "default", Type: store.EventLeased, At: now, Actor: "system", Detail: []byte(`{"worker":"w-1"}`)})
			}
			for _, id := range ids[from:to] {
				if err := w.JobTransition(ctx, store.JobTransitionParams{ID: id, FromStates: []store.State{store.StateLeased}, ExpectAttempt: 1, At: now,
					Set: store.JobSet{State: store.Ptr(store.StateSucceeded), StartedAt: &now, FinishedAt: &now, WorkerID: store.Ptr(""), LeaseExpiresAt: &time.Time{}}}); err != nil {
					return err
				}
				evs = append(evs,
					store.Event{JobID: id, Attempt: 1, Tenant: "default", Type: store.EventStarted, At: now, Actor: "worker:w-1"},
					store.Event{JobID: id, Attempt: 1, Tenant: "default", Type: store.EventSucceeded, At: now, Actor: "worker:w-1"})
				execs = append(execs, store.Execution{JobID: id, Attempt: 1, WorkerID: "w-1", LeasedAt: now, StartedAt: now, FinishedAt: now, Outcome: store.OutcomeSucceeded})
			}
			if err := w.ExecutionUpsertMany(ctx, execs); err != nil {
				return err
			}
			return w.EventAppend(ctx, evs)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/job")
}

// BenchmarkInsertBatched: one Write inserting n jobs through
// JobInsertBatched, as the dispatcher submits them.
func BenchmarkInsertBatched(b *testing.B) {
	benchInserts(b, []int{100, 500}, store.Writer.JobInsertBatched)
}

// benchInserts runs, for each n, one Write inserting n jobs with insert.
func benchInserts(b *testing.B, sizes []int, insert func(store.Writer, context.Context, store.Job) error) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			s := openTemp(b)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now := time.Now()
				err := s.Write(ctx, func(w store.Writer) error {
					for range n {
						if err := insert(w, ctx, benchJob(store.NewID(now), now)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, n, "jobs/s")
		})
	}
}

// BenchmarkSubmitEvent: one Write submitting 500 jobs as the dispatcher
// does, each with its submitted event, kept as an event row (as before
// "The submitted event in the job row", store doc.go) or held by the job
// row. It reports the store's cost per job.
func BenchmarkSubmitEvent(b *testing.B) {
	const n = 500
	for _, held := range []bool{false, true} {
		b.Run(fmt.Sprintf("held=%v", held), func(b *testing.B) {
			s := openTemp(b)
			ctx := context.Background()
			var next int64
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for range b.N {
				now := time.Now()
				err := s.Write(ctx, func(w store.Writer) error {
					evs := make([]store.Event, 0, n)
					for range n {
						next++
						j := benchJob(store.NewID(now), now)
						if held {
							j.SubmitEventID, j.SubmitActor = next, "open"
						}
						if err := w.JobInsertBatched(ctx, j); err != nil {
							return err
						}
						ev := store.SubmittedEvent(next, j.ID, j.Tenant, now, "open", j.Type, j.Lane, j.Priority)
						ev.Synthesised = held
						evs = append(evs, ev)
					}
					return w.EventAppend(ctx, evs)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(n*b.N), "µs/job")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1000/float64(n*b.N), "cpu-µs/job")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
