package dispatch

import (
	"fmt"
	"sort"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// The dispatcher's read-only views: explain, lanes, workers.

// explain asks the engine why the job is not running, with a rough
// estimated start: its position over the pool's slots, times the learned
// cost of its kind of work.
func (d *Dispatcher) explain(id string, now time.Time) (api.Explanation, bool) {
	rec := d.jobs[id]
	if rec == nil {
		return api.Explanation{}, false
	}
	x := api.Explanation{JobID: id, State: string(rec.job.State), Lane: rec.job.Lane}
	if rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
		x.Code, x.Message = string(policy.CodeRunning), fmt.Sprintf("%s on worker %s (attempt %d)", rec.job.State, rec.job.WorkerID, rec.job.Attempt)
		if rec.preemptFor != "" {
			x.Message += "; being preempted for job " + rec.preemptFor + ": it stops and is queued again, the attempt not charged"
			x.Blocker = rec.preemptFor
		}
		return x, true
	}
	e, err := d.eng.Explain(id, now)
	if err != nil {
		x.Code, x.Message = "unknown", err.Error()
		return x, true
	}
	x.Code, x.Message, x.Blocker = string(e.Code), e.Message, e.Blocker
	x.Score, x.Position, x.Queued = e.Score, e.Position, e.Queued
	x.Reservation = apiReservation(e.Reservation)
	x.RateLimit, x.Quota = apiRateBlock(e.RateLimit), apiQuotaBlock(e.Quota)
	d.estimateStart(&x, e, now)
	return x, true
}

func apiRateBlock(b *policy.RateBlock) *api.RateLimitBlock {
	if b == nil {
		return nil
	}
	return &api.RateLimitBlock{Limit: b.Limit, By: b.By, Value: b.Value, Rate: b.Rate, Per: b.Per.String(), Burst: b.Burst, NextToken: b.NextToken.UTC()}
}

func apiQuotaBlock(b *policy.QuotaBlock) *api.QuotaBlock {
	if b == nil {
		return nil
	}
	out := &api.QuotaBlock{Tenant: b.Tenant, Resource: b.Resource, Used: float64(b.Used), Limit: float64(b.Limit), Need: float64(b.Need)}
	if b.Resource == "cpu" {
		out.Used, out.Limit, out.Need = out.Used/1000, out.Limit/1000, out.Need/1000
	}
	return out
}

// maxBucketsShown bounds the buckets a rate limit lists in GET /lanes.
const maxBucketsShown = 100

// rateLimits is every rate limit with its emptiest buckets at now.
func (d *Dispatcher) rateLimits(now time.Time) []api.RateLimitInfo {
	var out []api.RateLimitInfo
	for _, r := range d.eng.RateLimits(now) {
		info := api.RateLimitInfo{Name: r.Name, Type: r.Type, Lane: r.Lane, By: r.By, Rate: r.Rate, Per: r.Per.String(), Burst: r.Burst, Buckets: []api.RateBucket{}}
		for _, b := range r.Buckets {
			if b.Tokens < float64(r.Burst) {
				info.Buckets = append(info.Buckets, api.RateBucket{Value: b.Value, Tokens: b.Tokens, NextToken: b.NextToken.UTC()})
			}
		}
		info.BucketsNotFull = len(info.Buckets)
		sort.SliceStable(info.Buckets, func(i, j int) bool { return info.Buckets[i].Tokens < info.Buckets[j].Tokens })
		info.Buckets = info.Buckets[:min(len(info.Buckets), maxBucketsShown)]
		out = append(out, info)
	}
	return out
}

// tenantsHeld is what each tenant's running jobs hold, by the engine.
func (d *Dispatcher) tenantsHeld() map[string]api.Resources {
	out := map[string]api.Resources{}
	for _, t := range d.eng.Tenants() {
		out[t.Name] = wire.Resources(t.Used)
	}
	return out
}

func apiReservation(r *policy.Reservation) *api.Reservation {
	if r == nil {
		return nil
	}
	out := &api.Reservation{JobID: r.JobID, WorkerID: r.WorkerID, Basis: string(r.Basis), WaitsFor: r.WaitsFor}
	if r.Basis != policy.BasisUnknown {
		out.StartsBy = wire.TimePtr(r.StartsBy)
	}
	return out
}

// estimateStart fills the explanation's estimated start: run_at for a job
// not yet due, else the engine's estimate from the running jobs' and the
// jobs ahead's expected run times (policy.EstimateStart), with its basis.
func (d *Dispatcher) estimateStart(x *api.Explanation, e policy.Explanation, now time.Time) {
	if e.Code == policy.CodeNotYetDue {
		x.EstimatedStart, x.EstimateBasis = wire.TimePtr(e.RunAt), "run_at"
		return
	}
	switch e.Code {
	case policy.CodeQueued, policy.CodeNoFreeSlot, policy.CodeLaneOverShare, policy.CodeReserved, policy.CodeBehindReservation, policy.CodePreempting:
	default:
		return // held by a cap, a conflict or a missing worker: capacity says nothing
	}
	est, ok := d.eng.EstimateStart(x.JobID, now)
	if !ok {
		return
	}
	x.EstimateBasis, x.EstimateNote = string(est.Basis), est.Reason
	if !est.At.IsZero() {
		x.EstimatedStart = wire.TimePtr(est.At)
	}
}

// tenantLanes is lanes() counting only tenant's unfinished jobs.
func (d *Dispatcher) tenantLanes(tenant string) api.LaneList {
	byLane := map[string]*api.LaneInfo{}
	out := api.LaneList{RateLimits: d.rateLimits(d.clock.Now())}
	for _, l := range d.eng.Lanes() {
		out.Lanes = append(out.Lanes, api.LaneInfo{Name: l.Name, Weight: l.Weight, Paused: l.Paused, PauseNote: d.pauseNote(l)})
	}
	for i := range out.Lanes {
		byLane[out.Lanes[i].Name] = &out.Lanes[i]
	}
	usage := map[string]policy.Resources{}
	for _, rec := range d.jobs {
		l := byLane[rec.job.Lane]
		if rec.job.Tenant != tenant || l == nil {
			continue
		}
		switch rec.job.State {
		case store.StateLeased, store.StateRunning:
			l.Running++
			usage[l.Name] = usage[l.Name].Add(rec.job.Resources)
		case store.StatePending:
			l.Pending++
			l.Queued++
		case store.StateBlocked, store.StateRetryWait:
			l.Pending++
		}
	}
	for name, u := range usage {
		byLane[name].Usage = wire.Resources(u)
	}
	return out
}

func (d *Dispatcher) lanes() api.LaneList {
	capRes, slots := d.eng.Capacity()
	out := api.LaneList{Capacity: api.Capacity{Resources: wire.Resources(capRes), Slots: slots}, RateLimits: d.rateLimits(d.clock.Now())}
	for _, l := range d.eng.Lanes() {
		out.Lanes = append(out.Lanes, api.LaneInfo{
			Name: l.Name, Weight: l.Weight, Pending: l.Pending, Queued: l.Queued, Running: l.Running,
			Usage: wire.Resources(l.Usage), DominantShare: l.DominantShare, Paused: l.Paused, PauseNote: d.pauseNote(l),
		})
	}
	return out
}

// pauseNote is the note a paused lane was paused with.
func (d *Dispatcher) pauseNote(l policy.LaneStats) string {
	if !l.Paused {
		return ""
	}
	return d.laneStates[l.Name].Note
}

func (d *Dispatcher) workerList() api.WorkerList {
	out := api.WorkerList{Workers: []api.WorkerInfo{}}
	for _, wk := range d.workers {
		state := string(store.WorkerActive)
		switch {
		case wk.draining:
			state = string(store.WorkerDraining)
		case wk.silent:
			state = "silent" // missed its heartbeats: offered no new work (silent.go)
		}
		out.Workers = append(out.Workers, api.WorkerInfo{
			ID: wk.w.ID, Name: wk.w.Name, Types: wk.w.Types, Handlers: wk.w.Handlers, Labels: wk.w.Labels, Slots: wk.w.Slots,
			CPU: float64(wk.w.Resources.MilliCPU) / 1000, MemoryMB: wk.w.Resources.MemoryMB, GPU: wk.w.Resources.GPU,
			State: state, Running: len(wk.jobs), RegisteredAt: wk.w.RegisteredAt.UTC(), LastSeenAt: wk.lastSeen.UTC(),
		})
	}
	sort.Slice(out.Workers, func(i, j int) bool { return out.Workers[i].ID < out.Workers[j].ID })
	return out
}

// reasons returns the engine's reason code for each job of ids that it
// still holds and that is not leased or running.
func (d *Dispatcher) reasons(ids []string, now time.Time) map[string]string {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		rec := d.jobs[id]
		if rec == nil || rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
			continue
		}
		if code, err := d.eng.Reason(id, now); err == nil {
			out[id] = string(code)
		}
	}
	return out
}
