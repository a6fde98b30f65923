package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds fairway's metric families and the registry they are in.
type Metrics struct {
	reg *prometheus.Registry

	submitted   *prometheus.CounterVec
	finished    *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	wait        *prometheus.HistogramVec
	run         *prometheus.HistogramVec
	expirations prometheus.Counter
	schedLag    prometheus.Histogram
	schedMissed prometheus.Counter
	decision    prometheus.Histogram
	commit      prometheus.Histogram
	durable     prometheus.Histogram
	requests    *prometheus.CounterVec
	reqSeconds  *prometheus.HistogramVec
	purged      *prometheus.CounterVec
	backlog     *prometheus.GaugeVec
	preempted   *prometheus.CounterVec
}

// Snapshot is the dispatcher's current state, read at scrape time.
type Snapshot struct {
	Jobs    []LaneTenantCount
	Workers map[string]int // by state: active, draining
}

// LaneTenantCount is the unfinished jobs of one tenant in one lane.
type LaneTenantCount struct {
	Lane, Tenant     string
	Pending, Running int
}

// jobBuckets span a few milliseconds to a day: waits and run times.
var jobBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400}

// fastBuckets span 10 µs to 1 s: the dispatcher's own timings.
var fastBuckets = []float64{1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// New registers fairway's metrics, the Go runtime's and the process's in
// a registry of their own; snapshot (may be nil) is called at each scrape.
func New(snapshot func() (Snapshot, bool)) *Metrics {
	reg := prometheus.NewRegistry()
	f := factory{reg}
	m := &Metrics{
		reg: reg,
		submitted: f.counterVec("fairway_jobs_submitted_total",
			"Jobs accepted (a deduplicated submit is not counted), by lane and type.", "lane", "type"),
		finished: f.counterVec("fairway_jobs_finished_total",
			"Jobs that reached a final state, by lane, type, state (succeeded, failed, cancelled) and failure class.",
			"lane", "type", "state", "failure_class"),
		attempts: f.counterVec("fairway_attempts_ended_total",
			"Attempts that ended, retried or not, by lane, type, outcome and failure class.", "lane", "type", "outcome", "failure_class"),
		wait: f.histogramVec("fairway_job_wait_seconds",
			"From a job's enqueue (submit, or the end of its back-off) to the start of its attempt, by lane and type.",
			jobBuckets, "lane", "type"),
		run: f.histogramVec("fairway_job_run_seconds",
			"From an attempt's start to its end, by lane and type.", jobBuckets, "lane", "type"),
		expirations: f.counter("fairway_lease_expirations_total",
			"Leases that ran out (the worker went silent or never started the job)."),
		schedLag: f.histogram("fairway_schedule_lag_seconds",
			"From a schedule slot's nominal time to the start of its job's first attempt.", jobBuckets),
		schedMissed: f.counter("fairway_schedule_missed_slots_total",
			"Schedule slots not run because they were older than the catch-up window."),
		decision: f.histogram("fairway_dispatch_seconds",
			"Time the scheduling engine spent on one batch's admission pass.", fastBuckets),
		commit: f.histogram("fairway_store_commit_seconds",
			"Time the dispatcher spends handing one batch to the store: on SQLite recording and queueing it (or running it, for a batch with an operation that answers at once), on PostgreSQL the whole transaction.", fastBuckets),
		durable: f.histogram("fairway_store_fsync_seconds",
			"From a batch's hand-over to its durability (SQLite: the queued transaction and the fsync of the WAL; about zero on PostgreSQL, whose commit is durable).",
			fastBuckets),
		requests: f.counterVec("fairway_http_requests_total",
			"HTTP requests answered, by route pattern and status code.", "route", "code"),
		reqSeconds: f.histogramVec("fairway_http_request_duration_seconds",
			"Time to answer an HTTP request, by route pattern (long polls included).", fastBuckets, "route"),
		purged: f.counterVec("fairway_retention_deleted_total",
			"Rows retention deleted, by what (jobs, with their executions and logs; events).", "what"),
		preempted: f.counterVec("fairway_preemptions_total",
			"Running or leased attempts the engine chose to stop for a waiting job of higher priority, by the victim's lane.", "lane"),
		backlog: f.gaugeVec("fairway_retention_backlog_seconds",
			"How far retention is behind, by what (jobs, events): how long past its retention the oldest row still stored is, as of the last purge; 0 when caught up.", "what"),
	}
	for _, what := range []string{"jobs", "events"} { // exported from the start, at 0
		m.purged.WithLabelValues(what)
		m.backlog.WithLabelValues(what)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if snapshot != nil {
		reg.MustRegister(&stateCollector{snapshot: snapshot})
	}
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// JobSubmitted counts a job accepted.
func (m *Metrics) JobSubmitted(lane, typ string) {
	if m != nil {
		m.submitted.WithLabelValues(lane, typ).Inc()
	}
}

// JobStarted observes an attempt's wait, and the schedule lag of a
// scheduled job's first attempt (lag < 0: none).
func (m *Metrics) JobStarted(lane, typ string, wait, lag time.Duration) {
	if m == nil {
		return
	}
	m.wait.WithLabelValues(lane, typ).Observe(max(wait, 0).Seconds())
	if lag >= 0 {
		m.schedLag.Observe(lag.Seconds())
	}
}

// AttemptEnded counts an ended attempt and observes its run time (ran <
// 0: it never started).
func (m *Metrics) AttemptEnded(lane, typ, outcome, class string, ran time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(lane, typ, outcome, class).Inc()
	if ran >= 0 {
		m.run.WithLabelValues(lane, typ).Observe(ran.Seconds())
	}
}

// JobFinished counts a job in its final state.
func (m *Metrics) JobFinished(lane, typ, state, class string) {
	if m != nil {
		m.finished.WithLabelValues(lane, typ, state, class).Inc()
	}
}

// ExportLanes exports the per-lane counters at zero for the configured
// lanes, so that they appear before their first count.
func (m *Metrics) ExportLanes(lanes []string) {
	if m == nil {
		return
	}
	for _, l := range lanes {
		m.preempted.WithLabelValues(l)
	}
}

// Preempted counts a victim of preemption, by its lane.
func (m *Metrics) Preempted(lane string) {
	if m != nil {
		m.preempted.WithLabelValues(lane).Inc()
	}
}

// LeaseExpired counts a lease that ran out.
func (m *Metrics) LeaseExpired() {
	if m != nil {
		m.expirations.Inc()
	}
}

// ScheduleMissed counts slots skipped past the catch-up window.
func (m *Metrics) ScheduleMissed(n int) {
	if m != nil {
		m.schedMissed.Add(float64(n))
	}
}

// Decision observes an admission pass.
func (m *Metrics) Decision(d time.Duration) {
	if m != nil {
		m.decision.Observe(d.Seconds())
	}
}

// Commit observes a store transaction.
func (m *Metrics) Commit(d time.Duration) {
	if m != nil {
		m.commit.Observe(d.Seconds())
	}
}

// Durable observes the wait from a commit to its durability.
func (m *Metrics) Durable(d time.Duration) {
	if m != nil {
		m.durable.Observe(d.Seconds())
	}
}

// Request counts an answered request.
func (m *Metrics) Request(route string, code int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.reqSeconds.WithLabelValues(route).Observe(took.Seconds())
}

// RetentionPurged counts the rows one purge deleted and sets how far
// behind it left retention.
func (m *Metrics) RetentionPurged(what string, deleted int64, backlog time.Duration) {
	if m == nil {
		return
	}
	m.purged.WithLabelValues(what).Add(float64(deleted))
	m.backlog.WithLabelValues(what).Set(backlog.Seconds())
}

// factory registers metrics in a registry.
type factory struct{ reg *prometheus.Registry }

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

// stateCollector reads the dispatcher's state at scrape time.
type stateCollector struct {
	snapshot func() (Snapshot, bool)
}

var (
	pendingDesc = prometheus.NewDesc("fairway_jobs_pending",
		"Unfinished jobs not running (queued, blocked, retry wait, held), by lane and tenant.", []string{"lane", "tenant"}, nil)
	runningDesc = prometheus.NewDesc("fairway_jobs_running",
		"Jobs leased or running, by lane and tenant.", []string{"lane", "tenant"}, nil)
	workersDesc = prometheus.NewDesc("fairway_workers",
		"Registered workers, by state (active, draining).", []string{"state"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- runningDesc
	ch <- workersDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	s, ok := c.snapshot()
	if !ok {
		return // the dispatcher is not running (a standby, or stopping)
	}
	for _, j := range s.Jobs {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(j.Pending), j.Lane, j.Tenant)
		ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(j.Running), j.Lane, j.Tenant)
	}
	for _, state := range []string{"active", "draining"} {
		ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(s.Workers[state]), state)
	}
}
