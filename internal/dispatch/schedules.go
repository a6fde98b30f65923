package dispatch

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/schedule"
	"github.com/fairwayhq/fairway/internal/store"
)

// Schedules fire on the dispatcher goroutine, as part of a batch: the jobs
// of the due slots are inserted in the same transaction that stores the
// schedule's new state (next_run_at, buffered slots), so after a crash a
// slot has either its job and the advanced schedule, or neither. Each
// job also carries its slot (schedule_id, scheduled_for) and the slot as
// its idempotency key, a second guard against a slot yielding two jobs.

// JobBuilder resolves a job spec against the configuration (types, lanes,
// defaults) into the job to store, as a submit does; schedules use it for
// their template at each slot.
type JobBuilder func(spec api.JobSpec, tenant string) (store.Job, error)

// schedRec is the dispatcher's record of a schedule.
type schedRec struct {
	s       store.Schedule
	spec    *schedule.Spec
	pol     schedule.Policy
	running int // its unfinished jobs
}

// parseSchedule checks a stored schedule and reads its spec and policy.
func parseSchedule(s store.Schedule) (*schedRec, error) {
	spec, err := schedule.Parse(s.Spec, schedule.Options{Zone: s.Timezone, Start: s.StartAt, End: s.EndAt, Jitter: s.Jitter})
	if err != nil {
		return nil, scheduleFieldError(err)
	}
	overlap, err := schedule.ParseOverlap(s.Overlap)
	if err != nil {
		return nil, scheduleFieldError(err)
	}
	return &schedRec{s: s, spec: spec, pol: schedule.Policy{Overlap: overlap, CatchupWindow: s.CatchupWindow}}, nil
}

func scheduleFieldError(err error) error {
	if err == nil {
		return nil
	}
	if fe, ok := err.(*schedule.FieldError); ok {
		return &FieldError{Field: fe.Field, Msg: fe.Msg}
	}
	return err
}

func (sr *schedRec) state() schedule.State {
	return schedule.State{Next: sr.s.NextRunAt, Buffered: sr.s.Buffered, Running: sr.running, Paused: !sr.s.Enabled}
}

// loadSchedules reads every schedule from the store (at rebuild).
func (d *Dispatcher) loadSchedules(ctx context.Context) error {
	after := ""
	for {
		page, err := d.st.ScheduleList(ctx, store.ScheduleListParams{AfterID: after, Limit: store.MaxListLimit})
		if err != nil {
			return fmt.Errorf("load schedules: %w", err)
		}
		for _, s := range page {
			sr, err := parseSchedule(s)
			if err != nil {
				d.log.Error("schedule cannot be read; it will not fire", "schedule", s.ID, "err", err)
				continue
			}
			d.scheds[s.ID] = sr
		}
		if len(page) < store.MaxListLimit {
			break
		}
		after = page[len(page)-1].ID
	}
	for _, rec := range d.jobs {
		if sr := d.scheds[rec.job.ScheduleID]; sr != nil {
			sr.running++
		}
	}
	for _, sr := range d.scheds {
		d.armSchedule(sr)
	}
	return nil
}

// slotAt is a schedule's next nominal time in the due heap. Entries are
// not removed when a schedule changes: an entry whose time is no longer
// the schedule's next_run_at is stale and skipped.
type slotAt struct {
	at time.Time
	id string
}

type slotHeap []slotAt

func (h slotHeap) Len() int { return len(h) }
func (h slotHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id < h[j].id
}
func (h slotHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)   { *h = append(*h, x.(slotAt)) }
func (h *slotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// armSchedule puts a schedule's next slot in the due heap.
func (d *Dispatcher) armSchedule(sr *schedRec) {
	if sr.s.Enabled && !sr.s.NextRunAt.IsZero() {
		heap.Push(&d.slotDue, slotAt{at: sr.s.NextRunAt, id: sr.s.ID})
	}
	if sr.s.Enabled && len(sr.s.Buffered) > 0 && sr.running == 0 {
		d.slotReady[sr.s.ID] = true
	}
}

// live says whether a heap entry is still its schedule's next slot.
func (d *Dispatcher) live(e slotAt) bool {
	sr := d.scheds[e.id]
	return sr != nil && sr.s.Enabled && sr.s.NextRunAt.Equal(e.at)
}

// NextSlot is the earliest pending slot of any schedule, so that the run
// loop can wake for it rather than at its next housekeeping tick.
func (d *Dispatcher) nextSlot() (time.Time, bool) {
	for d.slotDue.Len() > 0 {
		if top := d.slotDue[0]; d.live(top) {
			return top.at, true
		}
		heap.Pop(&d.slotDue)
	}
	return time.Time{}, false
}

// fireSchedules fires the slots due at tx.now (housekeeping): those whose
// next slot has come, and those whose buffered slot may run now that
// nothing of theirs runs. Only they are looked at, whatever the number of
// schedules.
func (d *Dispatcher) fireSchedules(tx *txn) {
	ids := map[string]bool{}
	for d.slotDue.Len() > 0 && !d.slotDue[0].at.After(tx.now) {
		if e := heap.Pop(&d.slotDue).(slotAt); d.live(e) {
			ids[e.id] = true
		}
	}
	for id := range d.slotReady {
		ids[id] = true
	}
	clear(d.slotReady)
	for _, id := range sortedKeysOf(ids) {
		sr := d.scheds[id]
		if sr == nil || !sr.s.Enabled {
			continue
		}
		due := !sr.s.NextRunAt.IsZero() && !sr.s.NextRunAt.After(tx.now)
		if !due && (len(sr.s.Buffered) == 0 || sr.running > 0) {
			continue
		}
		d.applySlots(tx, sr, schedule.Tick(sr.spec, sr.pol, sr.state(), tx.now), "schedule:"+id, nil)
		if tx.err != nil {
			return
		}
	}
}

// applySlots carries out what the firing rules decided, records what was
// missed and skipped, and stores the schedule's new state. It returns the
// ids of the jobs it created; the slots whose job could not be created
// are added to failed, when given.
func (d *Dispatcher) applySlots(tx *txn, sr *schedRec, a schedule.Action, actor string, failed *[]SlotFailure) []string {
	if a.CancelRunning {
		d.cancelScheduleJobs(tx, sr, actor)
		a.CancelDone(sr.running) // a running job stops when its worker says so; the new slot waits for it
	}
	var fired []string
	for _, nominal := range a.Fire {
		id, err := d.fireSlot(tx, sr, nominal, actor)
		if id != "" {
			fired = append(fired, id)
		}
		if err != nil && failed != nil {
			*failed = append(*failed, SlotFailure{ScheduledFor: nominal, Err: err})
		}
		sr.s.LastRunAt = nominal
	}
	for _, m := range a.Missed {
		n := m.Count
		d.observe(tx, func(mt *metrics.Metrics) { mt.ScheduleMissed(n) })
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventScheduleMissed, actor, map[string]any{
			"schedule_id": sr.s.ID, "from": m.From.UTC(), "to": m.To.UTC(), "count": m.Count, "at_least": m.AtLeast})
	}
	if len(a.Skipped) > 0 {
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventScheduleSkipped, actor, map[string]any{
			"schedule_id": sr.s.ID, "slots": utcTimes(a.Skipped[:min(len(a.Skipped), 100)]), "count": len(a.Skipped),
			"overlap": string(sr.pol.Overlap)})
	}
	next := a.State.Next
	sr.s.NextRunAt, sr.s.Buffered, sr.s.UpdatedAt = next, a.State.Buffered, tx.now
	if err := tx.w.ScheduleUpsert(tx.ctx, sr.s); err != nil {
		tx.fatal(fmt.Errorf("store schedule %s: %w", sr.s.ID, err))
	}
	if !next.IsZero() {
		heap.Push(&d.slotDue, slotAt{at: next, id: sr.s.ID})
	}
	return fired
}

func utcTimes(ts []time.Time) []time.Time {
	out := make([]time.Time, len(ts))
	for i, t := range ts {
		out[i] = t.UTC()
	}
	return out
}

// fireSlot creates the job of one slot, ready at its nominal time plus
// the schedule's jitter. A slot whose job cannot be created (a template
// the configuration no longer takes, a tenant over quota) is recorded as
// schedule_failed (which raises the schedule_failed alert) and dropped:
// the schedule goes on. The error says why.
func (d *Dispatcher) fireSlot(tx *txn, sr *schedRec, nominal time.Time, actor string) (string, error) {
	fail := func(err error) (string, error) {
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventScheduleFailed, actor, map[string]any{
			"schedule_id": sr.s.ID, "scheduled_for": nominal.UTC(), "error": err.Error()})
		return "", err
	}
	var spec api.JobSpec
	if err := json.Unmarshal(sr.s.Template, &spec); err != nil {
		return fail(fmt.Errorf("template: %w", err))
	}
	if d.build == nil {
		return fail(fmt.Errorf("this dispatcher cannot build jobs"))
	}
	j, err := d.build(spec, sr.s.Tenant)
	if err != nil {
		return fail(err)
	}
	j.ScheduleID, j.ScheduledFor = sr.s.ID, nominal
	j.IdempotencyKey = schedule.SlotKey(sr.s.ID, nominal)
	if ready := nominal.Add(sr.spec.JitterFor(sr.s.ID, nominal)); ready.After(tx.now) {
		j.RunAt = ready
	}
	res := d.submitJobs(tx, []store.Job{j})
	if res[0].err != nil {
		return fail(res[0].err)
	}
	if tx.err != nil || res[0].deduplicated {
		return res[0].jobID(), nil
	}
	sr.running++
	tx.scheduleEvent(res[0].jobID(), sr.s.ID, sr.s.Tenant, store.EventScheduleFired, actor, map[string]any{
		"schedule_id": sr.s.ID, "scheduled_for": nominal.UTC()})
	return res[0].jobID(), nil
}

// cancelScheduleJobs cancels the schedule's unfinished jobs (cancel_other).
func (d *Dispatcher) cancelScheduleJobs(tx *txn, sr *schedRec, actor string) {
	var ids []string
	for id, rec := range d.jobs {
		if rec.job.ScheduleID == sr.s.ID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d.cancel(tx, id, actor)
	}
}

// scheduledJobEnded updates the schedule of a job that ended: one job
// fewer running, and a pause when the job failed for good and the
// schedule pauses on failure.
func (d *Dispatcher) scheduledJobEnded(tx *txn, rec *jobRec) {
	sr := d.scheds[rec.job.ScheduleID]
	if sr == nil {
		return
	}
	sr.running--
	if sr.running == 0 && len(sr.s.Buffered) > 0 {
		d.slotReady[sr.s.ID] = true
	}
	if rec.job.State != store.StateFailed || !sr.s.PauseOnFailure || !sr.s.Enabled {
		return
	}
	sr.s.Enabled = false
	sr.s.PauseNote = fmt.Sprintf("paused after job %s (slot %s) failed: %s", rec.job.ID,
		rec.job.ScheduledFor.UTC().Format(time.RFC3339), rec.job.LastError)
	sr.s.UpdatedAt = tx.now
	if err := tx.w.ScheduleUpsert(tx.ctx, sr.s); err != nil {
		tx.fatal(fmt.Errorf("pause schedule %s: %w", sr.s.ID, err))
		return
	}
	tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventSchedulePaused, "system", map[string]any{"schedule_id": sr.s.ID, "note": sr.s.PauseNote})
}

// ScheduleNotFoundError answers an operation on a schedule the dispatcher
// does not hold.
type ScheduleNotFoundError struct{ ID string }

func (e *ScheduleNotFoundError) Error() string { return "no schedule " + e.ID }

// CreateSchedule stores a new schedule; its first slot is the first of its
// times after now. s.ID, CreatedAt and the run state are set here.
func (d *Dispatcher) CreateSchedule(ctx context.Context, s store.Schedule, actor string) (store.Schedule, error) {
	sr, err := parseSchedule(s)
	if err != nil {
		return store.Schedule{}, err
	}
	var out store.Schedule
	var opErr error
	err = d.submit(ctx, func(tx *txn) {
		if opErr = d.checkTemplate(s); opErr != nil {
			return
		}
		if opErr = scheduleFieldError(sr.spec.CheckFires(tx.now)); opErr != nil {
			return
		}
		sr.s.ID = "s-" + store.NewID(tx.now)
		sr.s.CreatedAt, sr.s.UpdatedAt = tx.now, tx.now
		sr.s.NextRunAt, sr.s.Buffered, sr.s.LastRunAt = sr.spec.Next(tx.now), nil, time.Time{}
		if err := tx.w.ScheduleUpsert(tx.ctx, sr.s); err != nil {
			tx.fatal(fmt.Errorf("store schedule: %w", err))
			return
		}
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventScheduleCreated, actor, map[string]any{"schedule_id": sr.s.ID, "spec": sr.s.Spec})
		d.scheds[sr.s.ID] = sr
		d.armSchedule(sr)
		out = sr.s
	})
	if err != nil {
		return store.Schedule{}, err
	}
	return out, opErr
}

// checkTemplate runs a submit's checks on the template (on the
// dispatcher goroutine: they read the registered workers), so that a
// template a submit would refuse, such as one with no command that no
// worker can run, is refused when the schedule is made or changed, with
// the field named template.<field>.
func (d *Dispatcher) checkTemplate(s store.Schedule) error {
	var spec api.JobSpec
	if err := json.Unmarshal(s.Template, &spec); err != nil {
		return &FieldError{Field: "template", Msg: err.Error()}
	}
	if d.build == nil {
		return nil
	}
	j, err := d.build(spec, s.Tenant)
	if err == nil {
		_, err = d.checkRunnable(j, 0, false)
	}
	var fe *FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return &FieldError{Field: "template." + fe.Field, Msg: fe.Msg}
	}
	return fmt.Errorf("template: %w", err)
}

// UpdateSchedule changes a schedule with change, applied to its current
// record on the dispatcher goroutine. A changed spec, zone or bounds
// starts again from the first of the new times after now.
func (d *Dispatcher) UpdateSchedule(ctx context.Context, id string, change func(*store.Schedule) error, actor string) (store.Schedule, error) {
	var out store.Schedule
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		old := d.scheds[id]
		if old == nil {
			opErr = &ScheduleNotFoundError{id}
			return
		}
		next := old.s
		next.Buffered = slices.Clone(old.s.Buffered)
		if opErr = change(&next); opErr != nil {
			return
		}
		sr, err := parseSchedule(next)
		if err != nil {
			opErr = err
			return
		}
		if !bytes.Equal(old.s.Template, next.Template) { // a pause or a resume always goes through
			if opErr = d.checkTemplate(next); opErr != nil {
				return
			}
		}
		if timesChanged(old.s, next) {
			if opErr = scheduleFieldError(sr.spec.CheckFires(tx.now)); opErr != nil {
				return
			}
			sr.s.NextRunAt, sr.s.Buffered = sr.spec.Next(tx.now), nil
		}
		sr.running, sr.s.UpdatedAt = old.running, tx.now
		if err := tx.w.ScheduleUpsert(tx.ctx, sr.s); err != nil {
			tx.fatal(fmt.Errorf("store schedule: %w", err))
			return
		}
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, scheduleEvent(old.s, sr.s), actor, map[string]any{"schedule_id": id, "note": sr.s.PauseNote})
		d.scheds[id] = sr
		d.armSchedule(sr)
		out = sr.s
	})
	if err != nil {
		return store.Schedule{}, err
	}
	return out, opErr
}

func timesChanged(a, b store.Schedule) bool {
	return a.Spec != b.Spec || a.Timezone != b.Timezone || !a.StartAt.Equal(b.StartAt) || !a.EndAt.Equal(b.EndAt)
}

func scheduleEvent(old, next store.Schedule) store.EventType {
	switch {
	case old.Enabled && !next.Enabled:
		return store.EventSchedulePaused
	case !old.Enabled && next.Enabled:
		return store.EventScheduleResumed
	}
	return store.EventScheduleUpdated
}

// SlotsResult is what a trigger or a backfill did.
type SlotsResult struct {
	Schedule store.Schedule
	Fired    []string      // the jobs created
	Failed   []SlotFailure // the slots whose job could not be created
	Buffered int           // slots now waiting behind a running job
	Skipped  int           // slots dropped by the overlap policy
}

// SlotFailure is a slot whose job could not be created, and why.
type SlotFailure struct {
	ScheduledFor time.Time
	Err          error
}

// TriggerSchedule fires a slot at now, under the schedule's overlap
// policy.
func (d *Dispatcher) TriggerSchedule(ctx context.Context, id, actor string) (SlotsResult, error) {
	return d.slotsOp(ctx, id, actor, func(sr *schedRec, now time.Time) (schedule.Action, error) {
		return schedule.Trigger(sr.pol, sr.state(), now), nil
	})
}

// BackfillSchedule fires the schedule's slots in [from, to) under overlap.
func (d *Dispatcher) BackfillSchedule(ctx context.Context, id string, from, to time.Time, overlap schedule.Overlap, actor string) (SlotsResult, error) {
	return d.slotsOp(ctx, id, actor, func(sr *schedRec, now time.Time) (schedule.Action, error) {
		a, err := schedule.Backfill(sr.spec, overlap, sr.state(), from, to)
		return a, scheduleFieldError(err)
	})
}

func (d *Dispatcher) slotsOp(ctx context.Context, id, actor string, decide func(*schedRec, time.Time) (schedule.Action, error)) (SlotsResult, error) {
	var out SlotsResult
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		sr := d.scheds[id]
		if sr == nil {
			opErr = &ScheduleNotFoundError{id}
			return
		}
		a, err := decide(sr, tx.now)
		if err != nil {
			opErr = err
			return
		}
		a.State.Next = sr.s.NextRunAt // a trigger or a backfill leaves the regular slots alone
		before := len(sr.s.Buffered)
		out.Fired = d.applySlots(tx, sr, a, actor, &out.Failed)
		out.Schedule, out.Buffered, out.Skipped = sr.s, len(sr.s.Buffered)-before, len(a.Skipped)
	})
	if err != nil {
		return SlotsResult{}, err
	}
	return out, opErr
}

// DeleteSchedule removes a schedule; its unfinished jobs go on.
func (d *Dispatcher) DeleteSchedule(ctx context.Context, id, actor string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		sr := d.scheds[id]
		if sr == nil {
			opErr = &ScheduleNotFoundError{id}
			return
		}
		if err := tx.w.ScheduleDelete(tx.ctx, id); err != nil {
			tx.fatal(fmt.Errorf("delete schedule %s: %w", id, err))
			return
		}
		tx.scheduleEvent("", sr.s.ID, sr.s.Tenant, store.EventScheduleDeleted, actor, map[string]any{"schedule_id": id})
		delete(d.scheds, id)
	})
	if err != nil {
		return err
	}
	return opErr
}
