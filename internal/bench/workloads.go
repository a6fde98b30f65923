package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The four workloads, ported from peerbench (../shared/peerbench,
// workloads.go) with the same semantics, sizes and output keys. Each one
// resets the system first and appends its figures to the summary line.

// env is what a workload runs against.
type env struct {
	sys  System
	info Info
	p    *Params
	logf func(format string, a ...any)
	// memstats adds the drain's allocation figures per phase to its line.
	memstats bool
	// cpustats adds the drain's CPU figures per phase to its line
	// (cpustats.go).
	cpustats bool
}

// allocMark is the process's cumulative allocation counters at one moment.
type allocMark struct{ bytes, mallocs uint64 }

// markAllocs reads the counters with --memstats (ReadMemStats stops the
// world), and is the zero mark without.
func (e *env) markAllocs() allocMark {
	if !e.memstats {
		return allocMark{}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return allocMark{bytes: ms.TotalAlloc, mallocs: ms.Mallocs}
}

// phaseMark is what --memstats and --cpustats read at the start of a
// drain phase.
type phaseMark struct {
	allocs allocMark
	cpu    cpuMark
}

func (e *env) markPhase() phaseMark {
	return phaseMark{allocs: e.markAllocs(), cpu: e.markCPU()}
}

// addPhase adds the phase's --memstats and --cpustats figures since from,
// prefixed with the phase's name.
func (e *env) addPhase(l *line, prefix string, from phaseMark, jobs int64) {
	e.addAllocs(l, prefix, from.allocs, jobs)
	e.addCPU(l, prefix, from.cpu, jobs)
}

// addAllocs adds, with --memstats, prefix_alloc_mb, prefix_alloc_b_per_job
// and prefix_mallocs_per_job: what the whole process allocated since from.
func (e *env) addAllocs(l *line, prefix string, from allocMark, jobs int64) {
	if !e.memstats {
		return
	}
	to := e.markAllocs()
	bytes, mallocs := float64(to.bytes-from.bytes), float64(to.mallocs-from.mallocs)
	l.add(prefix+"_alloc_mb", bytes/(1<<20))
	if jobs > 0 {
		l.add(prefix+"_alloc_b_per_job", bytes/float64(jobs)).add(prefix+"_mallocs_per_job", mallocs/float64(jobs))
	}
}

type workload struct {
	name string
	run  func(ctx context.Context, e *env, l *line) error
}

var workloads = []workload{
	{"drain", runDrain},
	{"steady", runSteady},
	{"latency", runLatency},
	{"priority", runPriority},
}

// fairwayWorkloads are fairway's own, outside peerbench's four (and
// outside "all"): they are selected by name.
var fairwayWorkloads = []workload{
	{"schedules", runSchedules},
	{"commands", runCommands},
}

var errUnsupported = errors.New("unsupported")

// stopWorkers stops the workers, bounded by --stop-timeout.
func (e *env) stopWorkers(stop func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), e.p.StopTimeout)
	defer cancel()
	if err := stop(ctx); err != nil {
		e.logf("stopping workers: %v", err)
	}
}

func newJobs(first, n int64, class Class) []Job {
	now := time.Now().UnixNano()
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Seq: first + int64(i), EnqueuedAt: now, Class: class}
	}
	return jobs
}

// ---------------------------------------------------------------- drain

func runDrain(ctx context.Context, e *env, l *line) error {
	sys, info, p := e.sys, e.info, e.p
	n := int64(p.Jobs)
	l.add("jobs", n).add("concurrency", p.Concurrency).
		add("insert_mode", info.BatchMode).add("insert_batch", info.BatchSize).add("insert_goroutines", info.BatchParallelism)
	if err := sys.Reset(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	rec := newRecorder(int(n))
	jobs := newJobs(1, n, ClassNormal)

	m0 := e.markPhase()
	t0 := time.Now()
	if err := sys.InsertBatch(ctx, jobs); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	insDur := time.Since(t0)
	l.add("insert_s", insDur).add("insert_jobs_per_s", rate(n, insDur))
	e.addPhase(l, "insert", m0, n)
	if out, err := sys.Outstanding(ctx); err != nil {
		return fmt.Errorf("outstanding: %w", err)
	} else if out != n {
		return fmt.Errorf("after insert the system reports %d outstanding jobs, want %d", out, n)
	}

	m1 := e.markPhase()
	t1 := time.Now()
	stop, err := sys.StartWorkers(ctx, WorkerConfig{Concurrency: p.Concurrency, OnStart: rec.onStart})
	if err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer e.stopWorkers(stop)
	allStarted := rec.waitStarted(ctx, n, boundedWait(ctx, p.DrainTimeout))
	tDone, drained, derr := waitDrained(ctx, sys, boundedWait(ctx, p.DrainTimeout))
	workDur := tDone.Sub(t1)
	handlers := time.Unix(0, rec.lastStart(1, n)).Sub(t1)
	first := time.Unix(0, rec.firstStart(1, n)).Sub(t1)
	l.add("work_s", workDur).add("work_jobs_per_s", rate(n, workDur)).
		add("handlers_done_s", handlers).add("first_start_ms", ms(first)).
		add("started", rec.started.Load()).add("dup_starts", rec.dups.Load())
	e.addPhase(l, "work", m1, n)
	switch {
	case derr != nil:
		return fmt.Errorf("outstanding: %w", derr)
	case !allStarted || !drained:
		return fmt.Errorf("timeout: %d of %d jobs started, drained=%v", rec.started.Load(), n, drained)
	}
	return nil
}

// ---------------------------------------------------------------- steady

func runSteady(ctx context.Context, e *env, l *line) error {
	sys, p := e.sys, e.p
	l.add("producers", p.Producers).add("concurrency", p.Concurrency)
	if err := sys.Reset(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	maxJobs := int64(p.MaxJobs)
	rec := newRecorder(int(maxJobs))
	insLat := make([]int64, maxJobs+1)
	ok := make([]bool, maxJobs+1)

	stop, err := sys.StartWorkers(ctx, WorkerConfig{Concurrency: p.Concurrency, OnStart: rec.onStart})
	if err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer e.stopWorkers(stop)
	time.Sleep(p.Warmup)

	var seq, inserted, errs atomic.Int64
	var firstErr atomic.Value
	t0 := time.Now()
	deadline := t0.Add(p.Duration)
	var wg sync.WaitGroup
	for i := 0; i < p.Producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				s := seq.Add(1)
				if s > maxJobs {
					return
				}
				a := time.Now()
				err := sys.Insert(ctx, Job{Seq: s, EnqueuedAt: a.UnixNano()})
				insLat[s] = int64(time.Since(a))
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					if errs.Add(1) > 100 {
						return
					}
					continue
				}
				ok[s] = true
				inserted.Add(1)
			}
		}()
	}
	wg.Wait()
	tEnd := time.Now()
	window := tEnd.Sub(t0)
	outAtEnd, err := sys.Outstanding(ctx)
	if err != nil {
		return fmt.Errorf("outstanding: %w", err)
	}
	ins := inserted.Load()
	var startedInWindow int64
	for s := int64(1); s <= min(seq.Load(), maxJobs); s++ {
		if v := rec.start[s].Load(); v != 0 && v <= tEnd.UnixNano() {
			startedInWindow++
		}
	}
	l.add("seconds", window).add("inserted", ins).add("inserted_per_s", rate(ins, window)).
		add("completed_per_s", rate(ins-outAtEnd, window)).add("started_per_s", rate(startedInWindow, window)).
		add("backlog_at_end", outAtEnd)

	tw := time.Now()
	rec.waitStarted(ctx, ins, boundedWait(ctx, p.DrainTimeout))
	_, drained, derr := waitDrained(ctx, sys, boundedWait(ctx, p.DrainTimeout-time.Since(tw)))

	var lat, il []int64
	var missing int
	for s := int64(1); s <= min(seq.Load(), maxJobs); s++ {
		if !ok[s] {
			continue
		}
		il = append(il, insLat[s])
		if rec.start[s].Load() == 0 {
			missing++
			continue
		}
		lat = append(lat, rec.lat[s].Load())
	}
	addLatencies(l, "", lat, missing, 0.50, 0.95, 0.99, 1)
	addLatencies(l, "insert_", il, 0, 0.50, 0.99)
	l.add("drain_after_s", time.Since(tw)).add("missing", missing).add("dup_starts", rec.dups.Load()).add("insert_errors", errs.Load())
	switch {
	case derr != nil:
		return fmt.Errorf("outstanding: %w", derr)
	case errs.Load() > 0:
		return fmt.Errorf("%d insert errors, first: %v", errs.Load(), firstErr.Load())
	case missing > 0 || !drained:
		return fmt.Errorf("timeout: %d inserted jobs never started within --drain-timeout", missing)
	}
	return nil
}

// ---------------------------------------------------------------- latency

func runLatency(ctx context.Context, e *env, l *line) error {
	sys, p := e.sys, e.p
	n := int64(p.Rate * p.Duration.Seconds())
	l.add("rate", p.Rate).add("concurrency", p.Concurrency).add("jobs", n)
	if n < 1 {
		return errors.New("rate*duration < 1")
	}
	if err := sys.Reset(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	rec := newRecorder(int(n))
	insLat := make([]int64, n+1)
	ok := make([]bool, n+1)
	stop, err := sys.StartWorkers(ctx, WorkerConfig{Concurrency: p.Concurrency, OnStart: rec.onStart})
	if err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	defer e.stopWorkers(stop)
	time.Sleep(p.Warmup)

	period := time.Duration(float64(time.Second) / p.Rate)
	var inserted, errs int64
	var firstErr error
	t0 := time.Now()
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		if d := time.Until(t0.Add(time.Duration(i) * period)); d > 0 {
			time.Sleep(d)
		}
		s := i + 1
		a := time.Now()
		err := sys.Insert(ctx, Job{Seq: s, EnqueuedAt: a.UnixNano()})
		insLat[s] = int64(time.Since(a))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			errs++
			continue
		}
		ok[s] = true
		inserted++
	}
	window := time.Since(t0)
	rec.waitStarted(ctx, inserted, boundedWait(ctx, p.DrainTimeout))
	var lat, il []int64
	var missing int
	for s := int64(1); s <= n; s++ {
		if !ok[s] {
			continue
		}
		il = append(il, insLat[s])
		if rec.start[s].Load() == 0 {
			missing++
			continue
		}
		lat = append(lat, rec.lat[s].Load())
	}
	var sum float64
	for _, v := range lat {
		sum += float64(v)
	}
	l.add("seconds", window).add("inserted", inserted).add("achieved_rate", rate(inserted, window))
	addLatencies(l, "", lat, missing, 0.50, 0.95, 0.99, 1)
	l.add("mean_ms", sum/float64(max(1, len(lat)))/1e6)
	addLatencies(l, "insert_", il, 0, 0.50, 0.99)
	l.add("missing", missing).add("dup_starts", rec.dups.Load()).add("insert_errors", errs)
	switch {
	case errs > 0:
		return fmt.Errorf("%d insert errors, first: %v", errs, firstErr)
	case missing > 0:
		return fmt.Errorf("timeout: %d jobs never started", missing)
	}
	return nil
}

// ---------------------------------------------------------------- priority

func runPriority(ctx context.Context, e *env, l *line) error {
	sys, info, p := e.sys, e.info, e.p
	low, high := int64(p.Low), int64(p.High)
	l.add("low", low).add("high", high).add("concurrency", p.PrioConcurrency).add("high_after_low_started", p.HighAfter)
	if !info.SupportsPriority {
		return errUnsupported
	}
	if p.HighAfter > p.Low {
		return errors.New("--high-after > --low")
	}
	if err := sys.Reset(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	rec := newRecorder(int(low + high))
	t0 := time.Now()
	if err := sys.InsertBatch(ctx, newJobs(1, low, ClassLow)); err != nil {
		return fmt.Errorf("insert low: %w", err)
	}
	l.add("low_insert_s", time.Since(t0))

	stop, err := sys.StartWorkers(ctx, WorkerConfig{Concurrency: p.PrioConcurrency, Priorities: true, OnStart: rec.onStart})
	if err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			e.stopWorkers(stop)
		}
	}()
	if !rec.waitStarted(ctx, int64(p.HighAfter), boundedWait(ctx, p.DrainTimeout)) {
		return fmt.Errorf("timeout: only %d low jobs started", rec.started.Load())
	}
	lowStartedBefore := rec.started.Load()

	// The high-priority jobs, one insert at a time, as a producer would.
	// enq: when the insert call began (the wait is measured from it);
	// ack: when it returned, i.e. the job was committed and visible.
	enq, ack := make([]int64, high), make([]int64, high)
	for i := int64(0); i < high; i++ {
		a := time.Now().UnixNano()
		enq[i] = a
		if err := sys.Insert(ctx, Job{Seq: low + 1 + i, EnqueuedAt: a, Class: ClassHigh}); err != nil {
			return fmt.Errorf("insert high: %w", err)
		}
		ack[i] = time.Now().UnixNano()
	}
	insHighDur := time.Duration(time.Now().UnixNano() - enq[0])
	// Wait until every high job started, then stop: the rest of the low
	// backlog is not part of the measurement.
	deadline := time.Now().Add(boundedWait(ctx, p.DrainTimeout))
	highStarted := func() int64 {
		var c int64
		for s := low + 1; s <= low+high; s++ {
			if rec.start[s].Load() != 0 {
				c++
			}
		}
		return c
	}
	for highStarted() < high && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	e.stopWorkers(stop)
	stopped = true

	hs := highStarted()
	lastHigh := rec.lastStart(low+1, low+high)
	firstEnq := enq[0]
	var waits []int64
	// Intervals during which at least one high job was committed (its insert
	// had returned) but had not started: a low job starting then is an
	// inversion. Unleased: the same, up to when the high job was leased
	// (known when the system reports lease times).
	var ivs, unleased []interval
	for i := int64(0); i < high; i++ {
		st := rec.start[low+1+i].Load()
		if st == 0 {
			ivs = append(ivs, interval{ack[i], math.MaxInt64})
			unleased = append(unleased, interval{ack[i], math.MaxInt64})
			continue
		}
		waits = append(waits, rec.lat[low+1+i].Load())
		if st > ack[i] {
			ivs = append(ivs, interval{ack[i], st})
		}
		if la := rec.leased[low+1+i].Load(); la > ack[i] {
			unleased = append(unleased, interval{ack[i], la})
		}
	}
	merged, unleased := mergeIntervals(ivs), mergeIntervals(unleased)
	var lowAfterFirst, lowWhileWaiting, lowLeasedWhileWaiting int64
	leaseKnown := true
	for s := int64(1); s <= low; s++ {
		t := rec.start[s].Load()
		if t == 0 || t <= firstEnq {
			continue
		}
		if hs == high && t > lastHigh {
			continue // after every high job had started: outside the window
		}
		lowAfterFirst++
		if inAny(merged, t) {
			lowWhileWaiting++
		}
		switch la := rec.leased[s].Load(); {
		case la == 0:
			leaseKnown = false
		case inAny(unleased, la):
			lowLeasedWhileWaiting++
		}
	}
	addLatencies(l, "high_wait_", waits, int(high-hs), 0.50, 0.99, 1)
	// The wait's two parts: the insert call (until it returned, the job
	// committed) and from then to the start.
	inserts, afterAck := make([]int64, 0, high), make([]int64, 0, high)
	for i := int64(0); i < high; i++ {
		inserts = append(inserts, ack[i]-enq[i])
		if st := rec.start[low+1+i].Load(); st != 0 {
			afterAck = append(afterAck, max(0, st-ack[i]))
		}
	}
	addLatencies(l, "high_insert_", inserts, 0, 0.50, 0.99)
	addLatencies(l, "high_ack_to_start_", afterAck, int(high-hs), 0.50, 0.99)
	l.add("high_insert_s", insHighDur).
		add("low_started_before_first_high", lowStartedBefore).
		add("low_started_after_first_high", lowAfterFirst).
		add("low_started_while_high_waiting", lowWhileWaiting)
	if leaseKnown {
		// The reading of "a low job started while a high one waited for a
		// slot it could use": the low job was leased while a high job was
		// committed and acknowledged but not yet leased (the lows counted
		// above include those leased before the high job existed, and
		// those that took other slots while the high one was on its way).
		l.add("low_leased_while_high_waiting", lowLeasedWhileWaiting)
	}
	l.
		add("all_high_started_s", time.Duration(lastHigh-firstEnq)).
		add("dup_starts", rec.dups.Load())
	if hs < high {
		return fmt.Errorf("timeout: %d of %d high jobs started", hs, high)
	}
	return nil
}

// interval is a span of time in unix ns, open at both ends.
type interval struct{ a, b int64 }

// mergeIntervals sorts intervals and merges those that overlap.
func mergeIntervals(ivs []interval) []interval {
	slices.SortFunc(ivs, func(x, y interval) int { return cmp.Compare(x.a, y.a) })
	var merged []interval
	for _, v := range ivs {
		if n := len(merged); n > 0 && v.a <= merged[n-1].b {
			merged[n-1].b = max(merged[n-1].b, v.b)
		} else {
			merged = append(merged, v)
		}
	}
	return merged
}

// inAny reports whether t falls inside one of the sorted intervals.
func inAny(ivs []interval, t int64) bool {
	for _, v := range ivs {
		if t > v.a && t < v.b {
			return true
		}
	}
	return false
}
