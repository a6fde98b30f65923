package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// Alert is what a webhook receives (the JSON body of a delivery).
type Alert struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	At         time.Time  `json:"at"`
	Tenant     string     `json:"tenant,omitempty"`
	JobID      string     `json:"job_id,omitempty"`
	ScheduleID string     `json:"schedule_id,omitempty"`
	Message    string     `json:"message,omitempty"`
	Event      *api.Event `json:"event,omitempty"` // the audit event that raised it
	Webhook    string     `json:"webhook"`         // the webhook it is delivered to
	Try        int        `json:"try"`             // 1 for the first delivery
}

// Outcome is how an alert's delivery to one webhook ended.
type Outcome struct {
	Alert     Alert
	Delivered bool
	Tries     int
	Status    int    // the last HTTP status, 0 if none
	Err       string // why it failed
}

// SignatureHeader carries a delivery's signature.
const SignatureHeader = "X-Fairway-Signature"

// Sign is the signature header's value for body at t.
func Sign(secret string, t time.Time, body []byte) string {
	unix := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(unix + "."))
	mac.Write(body)
	return "t=" + unix + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// queueSize bounds the deliveries waiting; workers deliver in parallel.
const (
	queueSize  = 1024
	workers    = 4
	maxBackoff = 5 * time.Minute
	quotaEvery = time.Minute
)

type delivery struct {
	alert Alert
	hook  config.Webhook
	try   int
}

// Alerter delivers alerts; see the package doc.
type Alerter struct {
	hooks    []config.Webhook                 // the configuration's
	all      atomic.Pointer[[]config.Webhook] // hooks and the admin API's (SetStored)
	client   *http.Client
	maxTries int
	base     time.Duration
	record   func(Outcome)
	log      *slog.Logger
	queue    chan delivery

	mu        sync.Mutex
	seq       int64
	lastQuota map[string]time.Time
	stopped   bool
	timers    map[*time.Timer]bool
}

// New returns an Alerter for cfg's webhooks; SetStored adds those of the
// admin API. record is called with every delivery's outcome, from the
// Alerter's goroutines.
func New(cfg config.Alerts, record func(Outcome), log *slog.Logger) *Alerter {
	a := &Alerter{
		hooks: cfg.Webhooks, client: &http.Client{Timeout: cfg.TimeoutOrDefault()},
		maxTries: cfg.MaxTriesOrDefault(), base: cfg.RetryBaseOrDefault(), record: record, log: log,
		queue: make(chan delivery, queueSize), lastQuota: map[string]time.Time{}, timers: map[*time.Timer]bool{},
	}
	a.all.Store(&a.hooks)
	return a
}

// SetStored replaces the webhooks registered through the admin API.
func (a *Alerter) SetStored(hooks []config.Webhook) {
	if a != nil {
		all := slices.Concat(a.hooks, hooks)
		a.all.Store(&all)
	}
}

// webhooks are every webhook alerts go to.
func (a *Alerter) webhooks() []config.Webhook { return *a.all.Load() }

// Listening reports whether any webhook is registered, so that a caller
// can skip gathering events for none. False on a nil Alerter.
func (a *Alerter) Listening() bool { return a != nil && len(a.webhooks()) > 0 }

// kindOf is the alert kind an audit event raises, "" for none.
func kindOf(e store.Event) string {
	switch e.Type {
	case store.EventSLAWarning:
		return "sla_warning"
	case store.EventSLAViolation:
		return "sla_violation"
	case store.EventFailed:
		return "job_failed"
	case store.EventScheduleMissed:
		return "schedule_missed"
	case store.EventScheduleFailed: // a slot's job could not be created
		return "schedule_failed"
	case store.EventSchedulePaused:
		if e.Actor == "system" { // paused on a failure, not by a person
			return "schedule_paused"
		}
	case store.EventWorkerLost:
		return "worker_lost"
	case store.EventPreemptRequested: // names the job preempted and, in for, the job it yields to
		return "job_preempted"
	}
	return ""
}

// FromEvents raises the alerts of a durable batch's events. It never
// blocks. Safe on a nil Alerter.
func (a *Alerter) FromEvents(evs []store.Event) {
	if !a.Listening() {
		return
	}
	for _, e := range evs {
		kind := kindOf(e)
		if kind == "" || (kind == "schedule_failed" && !a.firstInMinute("schedule:"+e.ScheduleID, e.At)) {
			continue
		}
		ev := wire.Event(e)
		a.Notify(Alert{Kind: kind, At: e.At, Tenant: e.Tenant, JobID: e.JobID, ScheduleID: e.ScheduleID, Event: &ev})
	}
}

// OverQuota raises tenant_over_quota for tenant, at most once a minute.
// Safe on a nil Alerter.
func (a *Alerter) OverQuota(tenant, message string, at time.Time) {
	if a == nil || !a.firstInMinute(tenant, at) {
		return
	}
	a.Notify(Alert{Kind: "tenant_over_quota", At: at, Tenant: tenant, Message: message})
}

// firstInMinute says whether an alert about key at is the first in a
// minute (tenant_over_quota per tenant, schedule_failed per schedule),
// and notes it.
func (a *Alerter) firstInMinute(key string, at time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, seen := a.lastQuota[key]; seen && at.Sub(last) < quotaEvery {
		return false
	}
	a.lastQuota[key] = at
	return true
}

// Notify queues al for every webhook that hears its kind and tenant. It
// never blocks: a full queue drops the delivery, which is logged and
// recorded as failed.
func (a *Alerter) Notify(al Alert) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.seq++
	al.ID = fmt.Sprintf("%s-%d", al.At.UTC().Format("20060102T150405.000000Z"), a.seq)
	a.mu.Unlock()
	for _, h := range a.webhooks() {
		if (len(h.Kinds) > 0 && !slices.Contains(h.Kinds, al.Kind)) || (len(h.Tenants) > 0 && !slices.Contains(h.Tenants, al.Tenant)) {
			continue
		}
		a.enqueue(delivery{alert: al, hook: h, try: 1})
	}
}

func (a *Alerter) enqueue(d delivery) {
	select {
	case a.queue <- d:
	default:
		a.log.Warn("alerts: the delivery queue is full; an alert is dropped", "webhook", d.hook.Name, "kind", d.alert.Kind)
		a.record(Outcome{Alert: d.withTry(), Tries: d.try - 1, Err: "dropped: the delivery queue was full"})
	}
}

func (d delivery) withTry() Alert {
	al := d.alert
	al.Webhook, al.Try = d.hook.Name, d.try
	return al
}

// Run delivers until ctx ends. Safe on a nil Alerter.
func (a *Alerter) Run(ctx context.Context) {
	if a == nil {
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-a.queue:
					a.deliver(ctx, d)
				}
			}
		})
	}
	<-ctx.Done()
	a.mu.Lock()
	a.stopped = true
	for t := range a.timers {
		t.Stop()
	}
	a.mu.Unlock()
	wg.Wait()
}

// deliver makes one try; a failed one is retried after its back-off.
func (a *Alerter) deliver(ctx context.Context, d delivery) {
	al := d.withTry()
	status, err := a.post(ctx, d.hook, al)
	if err == nil {
		a.record(Outcome{Alert: al, Delivered: true, Tries: d.try, Status: status})
		return
	}
	if ctx.Err() != nil {
		return // stopping: the alert is dropped with the server
	}
	if d.try >= a.maxTries {
		a.log.Warn("alerts: a delivery failed for good", "webhook", d.hook.Name, "kind", al.Kind, "tries", d.try, "err", err)
		a.record(Outcome{Alert: al, Tries: d.try, Status: status, Err: err.Error()})
		return
	}
	wait := min(a.base<<(d.try-1), maxBackoff)
	d.try++
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(wait, func() {
		a.mu.Lock()
		delete(a.timers, t)
		a.mu.Unlock()
		a.enqueue(d)
	})
	a.timers[t] = true
}

// post sends one try; an error for anything but a 2xx answer.
func (a *Alerter) post(ctx context.Context, h config.Webhook, al Alert) (int, error) {
	body, err := json.Marshal(al)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fairway-alerts")
	req.Header.Set("X-Fairway-Alert", al.Kind)
	req.Header.Set("X-Fairway-Delivery", al.ID)
	req.Header.Set(SignatureHeader, Sign(h.Secret, time.Now(), body))
	resp, err := a.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}
