package dispatch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"sync"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/internal/config"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/alerts"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// housekeepEvery is how often the dispatcher wakes with no command, to
// expire silent workers, watch SLAs and release due jobs.
const housekeepEvery = 100 * time.Millisecond

// command is one state change. apply runs on the dispatcher goroutine inside
// the batch's transaction; reply runs after the transaction ends, with nil
// if it committed.
type command struct {
	apply func(tx *txn)
	reply func(err error)
	// arriving lists, for a submit, the lanes and best priorities of the
	// jobs it brings: if one of them outranks a lease that has not left
	// the server, the command is applied at once rather than gathered
	// behind a commit waiting for the disk (see urgent).
	arriving []arrival
	// claims are the idempotency keys a submit brings: the batch reads
	// their holders in one query before it applies its commands (claims.go).
	claims []store.Claim
	// oneJob marks a submit of one job: on an idle store that claims in
	// place its key is not read first (txn.claimInPlace).
	oneJob bool
	// pre is the holders of claims as the submitting goroutine read them
	// before it sent the command (prereadHolders); nil: none, the batch
	// reads them (claims.go).
	pre *preread
}

// arrival is the best priority a submit brings into a lane.
type arrival struct {
	lane     string
	priority int
}

// txn is one batch's transaction and what must happen once it commits.
// Execution rows and audit events are gathered and written in bulk when the
// batch ends: multi-row inserts cost about one row's price.
type txn struct {
	ctx context.Context
	w   store.Writer
	now time.Time
	seq uint64 // the batch's number; its leases leave once it is durable
	// arrivals are jobs that became pending in this batch (submitted,
	// unblocked, reprioritized): the ones that may take an undelivered
	// lease's slot.
	arrivals []*jobRec
	events   []store.Event
	lastID   *int64 // the dispatcher's last event id drawn (Dispatcher.lastEventID)
	execs    []store.Execution
	after    []func()
	// observed are the batch's metrics, recorded once it is durable
	// (Dispatcher.observe).
	observed []func(m *metrics.Metrics)
	err      error
	// holders are the committed holders of the batch's claims, read once
	// for the whole batch (readHolders); read says which claims were.
	holders map[store.Claim]string
	read    map[store.Claim]bool
	// claimInPlace says that this batch's one-job submits claim their
	// keys with JobInsertBatched, whose claim answers a duplicate, rather
	// than read the holders first: the store claims in place
	// (store.ClaimsInPlace) and no Write is in flight (claims.go).
	claimInPlace bool
}

// flush writes the gathered execution rows.
func (t *txn) flush() {
	if t.err != nil {
		return
	}
	if len(t.execs) > 0 {
		if err := t.w.ExecutionUpsertMany(t.ctx, t.execs); err != nil {
			t.fatal(err)
			return
		}
		t.execs = t.execs[:0]
	}
}

// fatal records an error that aborts the whole transaction.
func (t *txn) fatal(err error) {
	if t.err == nil && err != nil {
		t.err = err
	}
}

func (t *txn) then(f func()) { t.after = append(t.after, f) }

// nudge wakes wk's waiting heartbeat once this batch is durable (nil wk:
// nothing to wake).
func (t *txn) nudge(wk *workerRec) {
	if wk == nil {
		return
	}
	t.then(func() {
		select {
		case wk.nudge <- struct{}{}:
		default:
		}
	})
}

// arrive notes a job that became pending in this batch.
func (t *txn) arrive(rec *jobRec) { t.arrivals = append(t.arrivals, rec) }

func (t *txn) event(jobID string, attempt int, tenant string, typ store.EventType, actor string, detail any) {
	t.add(t.newEvent(jobID, attempt, tenant, typ, actor, detail))
}

// newEvent returns an event of this batch with the next id, not yet
// recorded (add). Ids are drawn in the order events are recorded, for
// stored and synthesised events alike (package store, "Attempt history
// in the execution row").
func (t *txn) newEvent(jobID string, attempt int, tenant string, typ store.EventType, actor string, detail any) store.Event {
	return t.draw(t.peekEvent(jobID, attempt, tenant, typ, actor, detail))
}

// peekEvent is newEvent without drawing the id: the event has the id the
// next draw gives.
func (t *txn) peekEvent(jobID string, attempt int, tenant string, typ store.EventType, actor string, detail any) store.Event {
	var raw json.RawMessage
	if detail != nil {
		raw, _ = store.MarshalDetail(detail)
	}
	return store.Event{ID: t.nextEventID(), JobID: jobID, Attempt: attempt, Tenant: tenant, Type: typ, At: t.now, Actor: actor, Detail: raw}
}

// nextEventID is the id the next draw gives.
func (t *txn) nextEventID() int64 { return *t.lastID + 1 }

// draw takes e's id, which peekEvent gave it, from the counter; an event
// drawn in between would give one id twice, and fails the batch.
func (t *txn) draw(e store.Event) store.Event {
	if e.ID != t.nextEventID() {
		t.fatal(fmt.Errorf("event %s peeked as id %d, but the next id is %d", e.Type, e.ID, t.nextEventID()))
	}
	*t.lastID++
	return e
}

// add records an event of this batch.
func (t *txn) add(e store.Event) { t.events = append(t.events, e) }

// keep records e, an event an attempt row may hold, as synthesised when
// want (what a reader will synthesise from that row) is the same event,
// and as a row otherwise; it reports whether the row holds it.
func (t *txn) keep(e, want store.Event) bool {
	e.Synthesised = sameEvent(e, want)
	t.add(e)
	return e.Synthesised
}

// sameEvent reports whether a and b read back the same: the store keeps
// times to the microsecond.
func sameEvent(a, b store.Event) bool {
	return a.ID == b.ID && a.JobID == b.JobID && a.Attempt == b.Attempt && a.Tenant == b.Tenant && a.Type == b.Type &&
		a.Actor == b.Actor && a.ScheduleID == b.ScheduleID && bytes.Equal(a.Detail, b.Detail) &&
		a.At.Truncate(time.Microsecond).Equal(b.At.Truncate(time.Microsecond))
}

// scheduleEvent records an event of a schedule (and of the job it
// fired, if any) in this batch.
func (t *txn) scheduleEvent(jobID, scheduleID, tenant string, typ store.EventType, actor string, detail any) {
	t.event(jobID, 0, tenant, typ, actor, detail)
	t.events[len(t.events)-1].ScheduleID = scheduleID
}

// Dispatcher owns the engine and the in-memory index of unfinished jobs
// and workers. Only its goroutine touches them.
type Dispatcher struct {
	st store.Store
	// lastEventID is the last event id drawn, read back from the store
	// at every rebuild (txn.newEvent).
	lastEventID int64
	// eventsCap is the number of events the last batch recorded, up to
	// maxEventsCap: the next batch's slice starts with room for as many.
	// A drain's batch records hundreds, and a slice grown from empty
	// allocates and copies each event about twice over.
	eventsCap int
	queueing  store.Queueing // st, when it queues transactions; nil otherwise
	// syncGathering is st's store.SyncGathering, or nil; syncWait decides
	// whether a gathering waits for the fsync (gather.go).
	syncGathering store.SyncGathering
	syncWait      syncWait
	// claimsInPlace: st claims idempotency keys in place
	// (store.ClaimsInPlace), so an idle batch need not read them first.
	claimsInPlace bool
	cfg           config.Config
	log           *slog.Logger
	clock         Clock
	done          chan struct{} // closed when the Dispatcher has stopped
	doneOnce      sync.Once
	cmds          chan command
	maxBatch      int
	rng           *rand.Rand

	eng   *policy.Engine
	build JobBuilder
	// resultsPending wakes the result uploader (nil: none runs).
	resultsPending func()
	scheds         map[string]*schedRec
	slotDue        slotHeap        // schedules' next slots, earliest first
	slotReady      map[string]bool // schedules whose buffered slot may run
	jobs           map[string]*jobRec
	byState        stateSets // d.jobs by state, for listings (listing.go)
	workers        map[string]*workerRec
	waiters        map[string][]chan api.Job
	byTenant       map[string]int             // unfinished jobs per tenant
	laneStates     map[string]store.LaneState // the paused lanes, as stored
	metrics        *metrics.Metrics           // nil: none
	alerts         *alerts.Alerter            // nil: none
	tracer         *tracing.Tracer            // nil: tracing off
	pending        []func(tx *txn)            // repairs found at rebuild, applied in the first batch
	purgeDue       time.Time                  // when retention purges next (purge)
	purgeJobChunk  int                        // the jobs retention deletes per purge (0: purgeChunk)
	seen           map[string]store.Worker    // capabilities of every worker ever registered (seen.go)
	inflight       []committed                // committed batches waiting for the disk, oldest first
	seq            uint64                     // batches started
	durable        uint64                     // the last batch known durable: its leases and those before may leave
	queued         atomic.Int64               // commands handed to the Dispatcher so far
	// claiming are the idempotency keys this dispatcher's batches claimed
	// that may not be durable yet, with their jobs (claims.go); claimLog
	// holds them in batch order, to forget them once durable.
	claiming map[idemKey]claimRec
	claimLog []loggedClaim
	// tokens are the submit tokens of the last store.SubmitTokenWindow
	// (tokens.go).
	tokens submitTokens
	// claimFloor is d.seq at the last reset, which forgot every claim
	// kept: a pre-read must have begun once every batch started before it
	// was durable (claims.go).
	claimFloor uint64
	// durableSeq and startedSeq mirror durable and seq for the submitting
	// goroutines' pre-reads (prereadHolders).
	durableSeq atomic.Uint64
	startedSeq atomic.Uint64
	// outOfStep is set when a committed batch could not be made durable:
	// the state in memory ran ahead of the store, and is rebuilt from it
	// before the next batch (recover).
	outOfStep bool
}

// committed is a batch whose transaction committed but may not be durable
// yet. Its replies and after-commit actions (lease deliveries, waiters)
// run once the store says it is: nothing leaves the server before then.
// Meanwhile the dispatcher gathers the next batch (coalesce); a timer
// step (housekeeping) may still commit behind it, and one fsync then
// serves both.
type committed struct {
	seq      uint64
	durable  <-chan error
	batch    []command
	after    []func()
	observed []func(m *metrics.Metrics) // metrics recorded once durable, after the after-commit actions
	commitAt time.Time                  // when WriteDeferred returned (the fsync metric)
}

// maxInflight bounds the committed batches waiting for the disk; past it
// the dispatcher waits for the oldest.
const maxInflight = 64

// Options configures a Dispatcher.
type Options struct {
	Store  store.Store
	Config config.Config
	Logger *slog.Logger
	Clock  Clock
	// MaxBatch bounds the commands applied in one transaction.
	MaxBatch int
	// BuildJob resolves a schedule's job template at each slot.
	BuildJob JobBuilder
	// ResultsPending is called once a transaction that made result
	// uploads pending has committed (the uploader's Notify).
	ResultsPending func()
	// Metrics records what the dispatcher does (nil: nothing).
	Metrics *metrics.Metrics
	// Alerts hears each durable batch's events and tenants over quota
	// (nil: no webhooks).
	Alerts *alerts.Alerter
	// Tracer writes the spans of each ended attempt (nil: tracing off).
	Tracer *tracing.Tracer
}

// New builds a dispatcher; Rebuild loads its state, Run applies commands.
func New(o Options) (*Dispatcher, error) {
	d, err := newDispatcher(o.Store, o.Config, o.Logger, o.Clock, o.MaxBatch)
	if err == nil {
		d.build, d.resultsPending, d.metrics, d.alerts = o.BuildJob, o.ResultsPending, o.Metrics, o.Alerts
		d.tracer = o.Tracer
		lanes := make([]string, 0, len(d.cfg.PolicyConfig().Lanes))
		for name := range d.cfg.PolicyConfig().Lanes {
			lanes = append(lanes, name)
		}
		d.metrics.ExportLanes(lanes)
	}
	return d, err
}

// Rebuild loads the unfinished jobs and the workers from the store, as
// at start; the first batch then records a config_loaded event (the
// policy the server runs with: lanes, types, tenants, and a fingerprint
// of the policy, no keys).
func (d *Dispatcher) Rebuild(ctx context.Context) error {
	if err := d.rebuild(ctx); err != nil {
		return err
	}
	detail := d.configFingerprint()
	d.pending = append(d.pending, func(tx *txn) { tx.event("", 0, "", store.EventConfigLoaded, "system", detail) })
	return nil
}

// configFingerprint describes the policy configuration for the audit
// trail: counts, and a hash that changes with any policy setting.
func (d *Dispatcher) configFingerprint() map[string]any {
	pc := d.cfg.PolicyConfig()
	raw, _ := json.Marshal(pc)
	sum := sha256.Sum256(raw)
	return map[string]any{"lanes": len(pc.Lanes), "types": len(pc.Types), "tenants": len(pc.Tenants),
		"policy_sha256": hex.EncodeToString(sum[:])}
}

// Run applies commands until ctx ends, then stops the dispatcher.
func (d *Dispatcher) Run(ctx context.Context) {
	defer d.stopped()
	d.run(ctx)
}

// Stop marks a dispatcher that never ran as stopped.
func (d *Dispatcher) Stop() { d.stopped() }

// Done is closed once the dispatcher has stopped.
func (d *Dispatcher) Done() <-chan struct{} { return d.done }

func newDispatcher(st store.Store, cfg config.Config, log *slog.Logger, clock Clock, maxBatch int) (*Dispatcher, error) {
	q, _ := st.(store.Queueing)
	g, _ := st.(store.SyncGathering)
	inPlace, _ := st.(store.ClaimsInPlace)
	d := &Dispatcher{
		st: st, queueing: q, syncGathering: g, syncWait: newSyncWait(), claimsInPlace: inPlace != nil && inPlace.ClaimsInPlace(), cfg: cfg, log: log, clock: clock, done: make(chan struct{}),
		cmds: make(chan command, maxBatch), maxBatch: maxBatch,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed)),
	}
	return d, d.reset()
}

// stopped marks the dispatcher as stopped: commands sent from now on fail
// with ErrClosed.
func (d *Dispatcher) stopped() { d.doneOnce.Do(func() { close(d.done) }) }

func (d *Dispatcher) reset() error {
	eng, err := policy.New(d.cfg.PolicyConfig())
	if err != nil {
		return fmt.Errorf("server: engine: %w", err)
	}
	eng.TrackReleased(true)
	d.eng = eng
	d.jobs = map[string]*jobRec{}
	d.byState = stateSets{}
	d.scheds = map[string]*schedRec{}
	d.slotDue, d.slotReady = nil, map[string]bool{}
	d.workers = map[string]*workerRec{}
	d.byTenant = map[string]int{}
	d.claiming, d.claimLog, d.claimFloor = map[idemKey]claimRec{}, nil, d.seq
	d.tokens = submitTokens{}
	if d.waiters == nil {
		d.waiters = map[string][]chan api.Job{}
	}
	return nil
}

// submit sends a command and waits for its reply; it fails fast once the
// server is closed.
func (d *Dispatcher) submit(ctx context.Context, apply func(tx *txn)) error {
	return d.send(ctx, command{apply: apply})
}

func (d *Dispatcher) send(ctx context.Context, c command) error {
	done := make(chan error, 1)
	c.reply = func(err error) { done <- err }
	select {
	case d.cmds <- c:
		d.queued.Add(1)
	case <-d.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-d.done:
		return ErrClosed
	}
}

// errRebuilding answers the commands that arrive while a rebuild from the
// store has not succeeded yet (the database unreachable): 503, retry.
var errRebuilding = fmt.Errorf("%w: the dispatcher is rebuilding its state from the store", store.ErrUnavailable)

// rebuildRetry is how long the dispatcher waits before it tries again a
// rebuild that failed.
const rebuildRetry = 500 * time.Millisecond

func (d *Dispatcher) run(ctx context.Context) {
	tick := time.NewTicker(housekeepEvery)
	defer tick.Stop()
	slot := time.NewTimer(time.Hour)
	defer slot.Stop()
	var retry <-chan time.Time // set while a failed rebuild waits to be tried again
	for {
		if d.outOfStep && retry == nil {
			d.recover(ctx, nil, errors.New("a committed batch was not made durable"))
			if d.outOfStep && ctx.Err() == nil {
				// The rebuild failed (the database is unreachable):
				// commands meanwhile are answered errRebuilding, and
				// each batch of them tries a rebuild too.
				retry = time.After(rebuildRetry)
			}
		}
		d.wakeForSlot(slot)
		var batch []command
		var oldest <-chan error
		if len(d.inflight) > 0 {
			oldest = d.inflight[0].durable
		}
		select {
		case <-ctx.Done():
			d.settleAll()
			d.drainClosed()
			return
		case err := <-oldest:
			d.settle(err)
			d.settleReady()
			continue
		case c := <-d.cmds:
			batch = append(batch, c)
			if len(d.inflight) > 0 {
				batch = d.coalesce(ctx, batch)
			}
		case <-retry:
			retry = nil
			continue
		case <-tick.C:
		case <-slot.C:
		}
		if d.outOfStep {
			d.recover(ctx, d.gather(batch), errRebuilding)
			continue
		}
		d.step(ctx, d.gather(batch))
	}
}

// wakeForSlot sets the slot timer to the earliest schedule slot, when it
// comes before the next housekeeping tick: a slot's job is then created
// at its time, not up to a tick later.
func (d *Dispatcher) wakeForSlot(slot *time.Timer) {
	at, ok := d.nextSlot()
	if tok, tokOK := d.eng.NextToken(); tokOK && (!ok || tok.Before(at)) {
		at, ok = tok, true // a rate-limited job gets its token then
	}
	if !ok {
		slot.Reset(time.Hour)
		return
	}
	slot.Reset(max(0, at.Sub(d.clock.Now())))
}

// coalesce gathers the commands that arrive while earlier commits are
// being made durable, up to the batch limit, and returns once they are:
// these commands' answers would wait for the next fsync anyway, and one
// transaction for all of them writes far fewer pages than one each (most
// of a small commit's cost). Under load this is group commit with the
// next batch formed during the fsync; idle, there is nothing in flight
// and a command is applied at once.
//
// A command that brings a job outranking a lease still in a mailbox ends
// the gathering (urgent): applied now, its job can take that lease's slot
// before the lease leaves (see preempt); gathered, it would be applied
// only after the commit carrying the lease is durable and the lease has
// left, and the job would wait for the next free slot while the lower
// job starts.
//
// With a store that queues transactions (store.Queueing) the gathering
// also ends once the store is ready to take the next one at once: the
// dispatcher then forms batch n+1 while the store runs batch n and the
// disk syncs batch n-1. On a store whose readiness waits for an fsync
// (store.SyncGathering), it ends when only the fsync is left to wait
// for, if recent waits for it gathered nothing (gather.go).
func (d *Dispatcher) coalesce(ctx context.Context, batch []command) []command {
	if d.urgent(batch[len(batch)-1]) {
		return batch
	}
	var ready, unsynced <-chan struct{}
	if d.queueing != nil {
		ready = d.queueing.Ready()
	}
	if d.syncGathering != nil {
		unsynced = d.syncGathering.ReadyUnlessSyncing()
	}
	syncOnly, arrived := false, 0 // waiting for the fsync alone; commands since
	defer func() {
		if syncOnly {
			d.syncWait.observe(arrived)
		}
	}()
	for len(batch) < d.maxBatch && len(d.inflight) > 0 {
		if isClosed(unsynced) { // before any command: this wait's arrivals count
			unsynced = nil
			if isClosed(ready) {
				return batch // ready: not an fsync wait
			}
			if d.syncWait.skip() {
				return batch
			}
			syncOnly = true
		}
		select {
		case <-ready:
			return batch
		case <-unsynced: // handled above
		case c := <-d.cmds:
			batch = append(batch, c)
			if syncOnly {
				arrived++
			}
			if d.urgent(c) {
				return batch
			}
		case err := <-d.inflight[0].durable:
			d.settle(err)
			d.settleReady()
		case <-ctx.Done():
			return batch
		}
	}
	return batch
}

// settle finishes the oldest committed batch, whose durability the store
// has just reported: its after-commit actions run and its commands are
// answered, or, if the commit could not be made durable, they get the
// error. (The store then refuses every write: the server can only be
// restarted, and recovers from what the disk holds.)
func (d *Dispatcher) settle(err error) {
	c := d.inflight[0]
	d.inflight[0] = committed{}
	d.inflight = d.inflight[1:]
	if err != nil {
		d.log.Error("dispatcher: a commit could not be made durable", "err", err, "commands", len(c.batch))
		for _, cmd := range c.batch {
			cmd.reply(fmt.Errorf("commit: %w", err))
		}
		d.outOfStep = true
		return
	}
	d.durable = c.seq
	d.durableSeq.Store(c.seq)
	d.forgetDurableClaims()
	d.metrics.Durable(time.Since(c.commitAt))
	for _, f := range c.after {
		f()
	}
	for _, f := range c.observed {
		f(d.metrics)
	}
	for _, wk := range d.workers {
		d.deliver(wk)
	}
	for _, cmd := range c.batch {
		cmd.reply(nil)
	}
}

// settleReady settles, oldest first, the batches already durable.
func (d *Dispatcher) settleReady() {
	for len(d.inflight) > 0 {
		select {
		case err := <-d.inflight[0].durable:
			d.settle(err)
		default:
			return
		}
	}
}

// settleAll waits for every committed batch to be durable and settles it.
func (d *Dispatcher) settleAll() {
	for len(d.inflight) > 0 {
		d.settle(<-d.inflight[0].durable)
	}
}

// gather takes whatever else is already waiting, up to the batch limit.
func (d *Dispatcher) gather(batch []command) []command {
	for len(batch) < d.maxBatch {
		select {
		case c := <-d.cmds:
			batch = append(batch, c)
		default:
			return batch
		}
	}
	return batch
}

func (d *Dispatcher) drainClosed() {
	for {
		select {
		case c := <-d.cmds:
			c.reply(ErrClosed)
		default:
			d.closePollers()
			return
		}
	}
}

// maxEventsCap bounds Dispatcher.eventsCap: a batch that recorded more
// (a rebuild's, a bulk cancel's) does not size every next one.
const maxEventsCap = 4096

// step applies a batch in one transaction and queues it to be answered
// once the commit is durable.
func (d *Dispatcher) step(ctx context.Context, batch []command) {
	d.seq++
	d.startedSeq.Store(d.seq)
	tx := &txn{ctx: ctx, now: d.clock.Now(), seq: d.seq, lastID: &d.lastEventID,
		claimInPlace: d.claimsInPlace && len(d.inflight) == 0, events: make([]store.Event, 0, d.eventsCap)}
	began := time.Now()
	d.readHolders(tx, batch)
	durable, err := d.st.WriteDeferred(ctx, func(w store.Writer) error {
		tx.w = w
		for _, fix := range d.pending {
			fix(tx)
		}
		d.pending = nil
		for _, c := range batch {
			c.apply(tx)
			if tx.err != nil {
				return tx.err
			}
		}
		d.housekeep(tx)
		d.dispatch(tx)
		d.recordReleased(tx)
		tx.flush()
		if tx.err != nil {
			return tx.err
		}
		d.eventsCap = min(len(tx.events), maxEventsCap)
		if len(tx.events) == 0 {
			return nil
		}
		if d.alerts.Listening() {
			evs := tx.events
			tx.then(func() { d.alerts.FromEvents(evs) })
		}
		return w.EventAppend(ctx, tx.events)
	})
	if err != nil {
		d.recover(ctx, batch, err)
		return
	}
	committedAt := time.Now()
	d.metrics.Commit(committedAt.Sub(began))
	d.inflight = append(d.inflight, committed{seq: tx.seq, durable: durable, batch: batch, after: tx.after, observed: tx.observed, commitAt: committedAt})
	if len(d.inflight) > maxInflight {
		d.settle(<-d.inflight[0].durable)
	}
	d.settleReady()
}

// recover answers a failed batch and rebuilds the state from the store,
// which holds exactly what was committed; a store that queues
// transactions (store.Queueing) is then told to take writes again.
func (d *Dispatcher) recover(ctx context.Context, batch []command, err error) {
	if ctx.Err() == nil {
		d.log.Error("dispatcher: transaction failed; rebuilding from the store", "err", err, "commands", len(batch))
	}
	for _, c := range batch {
		c.reply(fmt.Errorf("commit: %w", err))
	}
	// The batches committed before this one are in the store: they are
	// settled on the state they were made on, before it is rebuilt.
	d.settleAll()
	if ctx.Err() != nil {
		return
	}
	d.closePollers()
	// Until a rebuild succeeds the state may be anything: nothing is
	// stepped on it (run).
	d.outOfStep = true
	if rerr := d.rebuild(ctx); rerr != nil {
		d.log.Error("dispatcher: rebuild failed", "err", rerr)
		return
	}
	d.outOfStep = false
	if d.queueing != nil {
		d.queueing.Resume()
	}
}

// dispatch admits what the engine allows and leases it.
func (d *Dispatcher) dispatch(tx *txn) {
	if tx.err != nil {
		return
	}
	if d.eng.FreeSlots() > 0 {
		d.admit(tx)
	} else {
		d.eng.Advance(tx.now)
	}
	d.preempt(tx)
	d.preemptRunning(tx)
}

// admit leases every job the engine admits now.
func (d *Dispatcher) admit(tx *txn) {
	began := time.Now()
	admitted := d.eng.Dispatch(tx.now, 0)
	d.metrics.Decision(time.Since(began))
	for _, a := range admitted {
		rec, wk := d.jobs[a.JobID], d.workers[a.WorkerID]
		if rec == nil || wk == nil {
			tx.fatal(fmt.Errorf("dispatcher: engine admitted unknown job %s or worker %s", a.JobID, a.WorkerID))
			return
		}
		d.lease(tx, rec, wk)
	}
}

// errInconsistent marks a guard miss the dispatcher did not expect: its
// index and the store disagree, so the batch is rolled back and rebuilt.
var errInconsistent = errors.New("Dispatcher index out of step with the store")

// transition writes a fenced change of rec's row and mirrors it in the
// index. A guard miss means the index and the store disagree: the batch is
// rolled back and the state rebuilt.
func (d *Dispatcher) transition(tx *txn, rec *jobRec, from []store.State, set store.JobSet) bool {
	if tx.err != nil {
		return false
	}
	leaveJobRow(tx, rec, &set)
	err := tx.w.JobTransitionBatched(tx.ctx, store.JobTransitionParams{
		ID: rec.job.ID, FromStates: from, ExpectAttempt: rec.job.Attempt, At: tx.now, Set: set,
	})
	if err != nil {
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
			err = fmt.Errorf("%w: job %s: %v", errInconsistent, rec.job.ID, err)
		}
		tx.fatal(err)
		return false
	}
	was := rec.job.State
	rec.apply(set, tx.now)
	d.byState.moved(rec, was)
	return true
}

// recordReleased writes the blocked → pending (and retry_wait → pending)
// transitions of jobs the engine found runnable in this batch: their run_at
// came, their back-off passed or their dependencies were met. A job leased
// in the same batch has already left that state.
func (d *Dispatcher) recordReleased(tx *txn) {
	for _, id := range d.eng.TakeReleased() {
		if rec := d.jobs[id]; rec != nil {
			d.markRunnable(tx, rec)
		}
	}
}

func (d *Dispatcher) markRunnable(tx *txn, rec *jobRec) {
	from := rec.job.State
	if from != store.StateBlocked && from != store.StateRetryWait {
		return
	}
	// enqueued_at becomes now: a job's age counts from when it may run,
	// also after a restart.
	set := store.JobSet{State: store.Ptr(store.StatePending), EnqueuedAt: &tx.now}
	if d.transition(tx, rec, []store.State{from}, set) {
		tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventUnblocked, "system", map[string]string{"from": string(from)})
		tx.arrive(rec)
	}
}

// Queued is the number of commands handed to the dispatcher so far.
func (d *Dispatcher) Queued() int64 { return d.queued.Load() }
