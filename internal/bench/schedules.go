package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/worker"
)

// The schedules workload is fairway's own (peerbench has no schedules):
// --schedules schedules, each "every --schedule-every" with its phase
// spread evenly over the interval, fire for --schedule-window into
// workers that keep up. It counts every slot's jobs as the handlers see
// them start: a slot seen twice is a duplicate, a slot of the window
// never seen is missed. Lag is from a slot's nominal time to its job's
// start in the handler.

// SchedulesParams size the schedules workload.
type SchedulesParams struct {
	Schedules int
	Every     time.Duration
	Window    time.Duration
}

// slotKey is one slot: a schedule and a nominal time.
type slotKey struct {
	schedule string
	at       int64 // unix ns
}

// slotRecorder is what the handlers write to.
type slotRecorder struct {
	mu    sync.Mutex
	seen  map[slotKey]int
	lags  []float64 // ms
	count atomic.Int64
}

func (r *slotRecorder) record(scheduleID string, nominal time.Time, started time.Time) {
	r.mu.Lock()
	r.seen[slotKey{scheduleID, nominal.UnixNano()}]++
	r.lags = append(r.lags, float64(started.Sub(nominal))/float64(time.Millisecond))
	r.mu.Unlock()
	r.count.Add(1)
}

func runSchedules(ctx context.Context, e *env, l *line) error {
	f, ok := e.sys.(*fairwaySystem)
	if !ok {
		return errUnsupported
	}
	sp := e.p.Schedules
	if sp.Schedules < 1 || sp.Every < time.Second || sp.Window < sp.Every {
		return fmt.Errorf("--schedules must be >= 1, --schedule-every >= 1s and --schedule-window >= --schedule-every")
	}
	if err := f.Reset(ctx); err != nil {
		return err
	}
	rec := &slotRecorder{seen: map[slotKey]int{}}
	h := worker.HandlerFunc(func(_ context.Context, job worker.Job) (json.RawMessage, error) {
		now := time.Now()
		if job.ScheduledFor != nil {
			rec.record(job.ScheduleID, *job.ScheduledFor, now)
		}
		return nil, nil
	})
	stop, err := f.startWorkers(ctx, e.p.Concurrency, h)
	if err != nil {
		return err
	}
	defer e.stopWorkers(stop)

	// The window starts once every schedule can be created: at about
	// 1,000 creations a second, plus a margin.
	start := time.Now().Add(5*time.Second + time.Duration(sp.Schedules)*time.Millisecond).Truncate(time.Second)
	end := start.Add(sp.Window)
	created := time.Now()
	ids, err := createSchedules(ctx, f, sp, start, end)
	if err != nil {
		return err
	}
	e.logf("schedules: %d created in %s; window %s to %s", len(ids), time.Since(created).Round(time.Millisecond),
		start.Format(time.TimeOnly), end.Format(time.TimeOnly))
	expected := expectedSlots(ids, sp, start, end)
	deadline := end.Add(e.p.DrainTimeout)
	for time.Now().Before(deadline) && rec.count.Load() < int64(len(expected)) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	duplicates, missed := 0, 0
	for k := range expected {
		switch n := rec.seen[k]; {
		case n == 0:
			missed++
		case n > 1:
			duplicates += n - 1
		}
	}
	extra := 0
	for k, n := range rec.seen {
		if !expected[k] {
			extra += n
		}
	}
	sort.Float64s(rec.lags)
	l.add("schedules", len(ids)).add("every", sp.Every).add("window", sp.Window).add("slots", len(expected))
	l.add("jobs_started", len(rec.lags)).add("duplicates", duplicates).add("missed", missed).add("outside_window", extra)
	l.add("lag_p50_ms", percentile(rec.lags, 50)).add("lag_p99_ms", percentile(rec.lags, 99)).add("lag_max_ms", percentile(rec.lags, 100))
	if duplicates > 0 || missed > 0 {
		return fmt.Errorf("%d duplicate and %d missed slots", duplicates, missed)
	}
	return nil
}

// createSchedules creates the schedules, 16 requests at a time; the i-th
// is offset by i·every/n so that the slots are spread over the interval.
func createSchedules(ctx context.Context, f *fairwaySystem, sp SchedulesParams, start, end time.Time) ([]string, error) {
	r, err := f.current()
	if err != nil {
		return nil, err
	}
	ids := make([]string, sp.Schedules)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= sp.Schedules || ctx.Err() != nil {
					return
				}
				offset := time.Duration(int64(sp.Every) * int64(i) / int64(sp.Schedules)).Truncate(time.Millisecond)
				endAt := end.Add(-time.Nanosecond)
				spec := api.ScheduleSpec{
					Name: fmt.Sprintf("bench-%d", i), Spec: fmt.Sprintf("every %s offset %s", sp.Every, offset),
					Template: api.JobSpec{Type: jobType, Payload: json.RawMessage(`{"s":0,"t":0}`)},
					StartAt:  &start, EndAt: &endAt, Overlap: "allow_all",
				}
				sc, err := r.cl.CreateSchedule(ctx, spec)
				if err != nil {
					select {
					case errs <- fmt.Errorf("create schedule %d: %w", i, err):
					default:
					}
					return
				}
				ids[i] = sc.ID
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return ids, ctx.Err()
}

// expectedSlots are the slots of the window: offset + k·every in
// [start, end) for each schedule.
func expectedSlots(ids []string, sp SchedulesParams, start, end time.Time) map[slotKey]bool {
	out := make(map[slotKey]bool, len(ids)*int(sp.Window/sp.Every+1))
	for i, id := range ids {
		offset := time.Duration(int64(sp.Every) * int64(i) / int64(sp.Schedules)).Truncate(time.Millisecond)
		first := time.Unix(0, 0).Add(offset)
		k := start.Sub(first) / sp.Every
		for t := first.Add(k * sp.Every); t.Before(end); t = t.Add(sp.Every) {
			if !t.Before(start) {
				out[slotKey{id, t.UnixNano()}] = true
			}
		}
	}
	return out
}

// percentile is the nearest-rank percentile of sorted values; NaN for
// none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	k := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}
