package policy

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Rate limits on starts (docs/scheduling.md, "Rate limits").
//
// A rate limit is a token bucket per value of its By field: Burst tokens
// at most, refilled at Rate tokens per Per; every admission of a job the
// limit matches takes one token from the job's bucket, and a job whose
// bucket is empty is not admitted. Time is an argument: a bucket keeps its
// level as of the last time it was looked at and refills from there, so
// the engine stays pure and replays exactly.
//
// The level is an integer in units of 1/Per tokens·ns: a token is Per
// units, the bucket holds at most Burst·Per, and it gains Rate units per
// nanosecond. The arithmetic is exact, so the time of the next token is
// exact too: last + ⌈(Per − level)/Rate⌉.
//
// An empty bucket blocks only the jobs that draw on it, and at the level
// where they share it, so nothing else waits behind them:
//
//   - a bucket every job of a group draws on (By "", type, lane or
//     label, which are the group's) fails the group's admission check, as
//     a type cap does: the group is skipped, at O(1) per decision;
//   - a tenant's bucket parks the class (a class is one tenant's), as a
//     tenant cap does, until the next token;
//   - a key's bucket takes the job out of its class until the next token
//     (stateRateWait), so the next job of the class, with another key,
//     competes in its place.
//
// Parked classes and waiting jobs come back through one heap of wake-ups
// ordered by token time, at the engine's next call with now past it;
// NextToken tells the owner when that is. A job waiting for a token holds
// no reservation (it is not a candidate), so it never idles capacity.

// RateLimit bounds the starts of the jobs it matches (Type and Lane; empty
// matches any) to Rate per Per, with bursts of up to Burst, in one bucket
// or one per value of By: "" (one bucket), "type", "lane", "tenant", "key"
// (the job's resource key) or "label:NAME" (the value of the job's
// required label NAME=VALUE; a job without it is not limited).
type RateLimit struct {
	Name  string
	Type  string
	Lane  string
	Rate  int64
	Per   time.Duration
	Burst int64 // 0: Rate
	By    string
}

type byKind uint8

const (
	byNone byKind = iota
	byType
	byLane
	byLabel
	byTenant
	byKey
)

// maxBucketUnits bounds Burst·Per so that a level and a refill never
// overflow.
const maxBucketUnits = 1 << 62

// maxRate bounds Rate for the same reason.
const maxRate = 1 << 30

func parseBy(by string) (byKind, string, error) {
	switch by {
	case "":
		return byNone, "", nil
	case "type":
		return byType, "", nil
	case "lane":
		return byLane, "", nil
	case "tenant":
		return byTenant, "", nil
	case "key":
		return byKey, "", nil
	}
	if name, ok := strings.CutPrefix(by, "label:"); ok && name != "" && !strings.Contains(name, "=") {
		return byLabel, name, nil
	}
	return 0, "", fmt.Errorf("by: unknown field %q (one of type, lane, tenant, key, label:NAME, or empty for one bucket)", by)
}

// validate checks a rate limit; the error names the field to fix.
func (r RateLimit) validate(lanes map[string]LaneConfig) error {
	switch {
	case r.Rate <= 0:
		return fmt.Errorf("rate: must be >= 1 start per period, got %d (to stop a type, pause its lane or set max_concurrency)", r.Rate)
	case r.Rate > maxRate:
		return fmt.Errorf("rate: must be at most %d, got %d (use a shorter per)", maxRate, r.Rate)
	case r.Per <= 0:
		return fmt.Errorf("per: must be a duration > 0, got %s", r.Per)
	case r.Burst < 0:
		return fmt.Errorf("burst: must be >= 1, got %d", r.Burst)
	}
	if b := r.burst(); b > maxBucketUnits/int64(r.Per) {
		return fmt.Errorf("burst: %d × per %s is too large (at most %d × 1ns)", b, r.Per, int64(maxBucketUnits))
	}
	if r.Lane != "" {
		if _, ok := lanes[r.Lane]; !ok {
			return fmt.Errorf("lane: unknown lane %q", r.Lane)
		}
	}
	_, _, err := parseBy(r.By)
	return err
}

func (r RateLimit) burst() int64 {
	if r.Burst == 0 {
		return r.Rate
	}
	return r.Burst
}

func validateRateLimits(in []RateLimit, lanes map[string]LaneConfig) ([]RateLimit, error) {
	seen := map[string]bool{}
	out := make([]RateLimit, 0, len(in))
	for i, r := range in {
		if r.Name == "" {
			return nil, fmt.Errorf("%w: rate_limits[%d].name: required", ErrInvalidConfig, i)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("%w: rate_limits.%s: name used twice", ErrInvalidConfig, r.Name)
		}
		seen[r.Name] = true
		if err := r.validate(lanes); err != nil {
			return nil, fmt.Errorf("%w: rate_limits.%s.%v", ErrInvalidConfig, r.Name, err)
		}
		r.Burst = r.burst()
		out = append(out, r)
	}
	return out, nil
}

// rateLimit is a configured limit and its buckets.
type rateLimit struct {
	RateLimit
	kind    byKind
	label   string // byLabel: the label's name
	cost    int64  // units of one token: Per in ns
	full    int64  // Burst·Per
	buckets map[string]*bucket
}

func newRateLimit(r RateLimit) *rateLimit {
	kind, label, _ := parseBy(r.By)
	return &rateLimit{RateLimit: r, kind: kind, label: label, cost: int64(r.Per),
		full: r.Burst * int64(r.Per), buckets: map[string]*bucket{}}
}

// matches reports whether the limit applies to jobs of the type and lane.
func (r *rateLimit) matches(typ, lane string) bool {
	return (r.Type == "" || r.Type == typ) && (r.Lane == "" || r.Lane == lane)
}

// bucket returns the bucket of a value, full when new.
func (r *rateLimit) bucket(value string, now int64) *bucket {
	b, ok := r.buckets[value]
	if !ok {
		b = &bucket{lim: r, value: value, level: r.full, last: now}
		r.buckets[value] = b
	}
	return b
}

// bucket is one value's token bucket.
type bucket struct {
	lim    *rateLimit
	value  string
	level  int64 // tokens·Per as of last
	last   int64 // unix ns of the last refill
	wakeAt int64 // a wake-up for it is in the heap at this time (0: none)
	parked []*class
}

// refill brings the level up to now: Rate units per nanosecond, at most
// full. A now before the last refill adds nothing.
func (b *bucket) refill(now int64) {
	if now <= b.last {
		return
	}
	dt, need := now-b.last, b.lim.full-b.level
	b.last = now
	if need <= 0 {
		return
	}
	if dt >= ceilDiv(need, b.lim.Rate) {
		b.level = b.lim.full
		return
	}
	b.level += dt * b.lim.Rate
}

// ready reports whether a token is there at now.
func (b *bucket) ready(now int64) bool {
	b.refill(now)
	return b.level >= b.lim.cost
}

// take spends a token (the caller checked ready).
func (b *bucket) take(now int64) {
	b.refill(now)
	b.level -= b.lim.cost
}

// nextToken is when the bucket next holds a whole token (last when it
// does).
func (b *bucket) nextToken() int64 {
	if b.level >= b.lim.cost {
		return b.last
	}
	return b.last + ceilDiv(b.lim.cost-b.level, b.lim.Rate)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// labelValue returns the value of the label name among a job's labels
// (NAME=VALUE, or NAME alone for ""), and whether it has it.
func labelValue(labels []string, name string) (string, bool) {
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

// groupBuckets resolves, at a group's creation, the buckets every job of
// the group draws on, and the limits it draws on per tenant and per key.
func (e *Engine) groupBuckets(g *group, labels []string, now int64) {
	for _, r := range e.limits {
		if !r.matches(g.typ.name, g.ln.name) {
			continue
		}
		switch r.kind {
		case byNone:
			g.buckets = append(g.buckets, r.bucket("", now))
		case byType:
			g.buckets = append(g.buckets, r.bucket(g.typ.name, now))
		case byLane:
			g.buckets = append(g.buckets, r.bucket(g.ln.name, now))
		case byLabel:
			if v, ok := labelValue(labels, r.label); ok {
				g.buckets = append(g.buckets, r.bucket(v, now))
			}
		case byTenant:
			g.tenantLimits = append(g.tenantLimits, r)
		case byKey:
			g.keyLimits = append(g.keyLimits, r)
		}
	}
}

// groupBucketsReady reports whether every group-wide bucket has a token;
// an empty one is scheduled to wake the owner at its next token.
func (e *Engine) groupBucketsReady(g *group, now int64) bool {
	for _, b := range g.buckets {
		if !b.ready(now) {
			e.wakeBucket(b)
			return false
		}
	}
	return true
}

// rateBlocked applies the per-tenant and per-key limits to the class head
// c offers: an empty tenant bucket parks the class, an empty key bucket
// takes the head out of its class until its next token. It reports
// whether it did either.
func (e *Engine) rateBlocked(g *group, c *class, now time.Time) bool {
	n := now.UnixNano()
	for _, r := range g.tenantLimits {
		if b := r.bucket(c.tnt.name, n); !b.ready(n) {
			c.tenantParked = true
			g.unplace(c)
			b.parked = append(b.parked, c)
			e.wakeBucket(b)
			return true
		}
	}
	h := c.head()
	for _, r := range g.keyLimits {
		if b := r.bucket(h.job.Key, n); !b.ready(n) {
			c.jobs.popHead()
			g.queued--
			g.ln.queued--
			e.leaveQueue(h, now)
			h.state, h.cls, h.grp, h.wakeAt = stateRateWait, nil, nil, b.nextToken()
			e.wakes.push(rateWake{at: h.wakeAt, en: h})
			g.place(c, n)
			return true
		}
	}
	return false
}

// takeTokens charges an admitted job's buckets.
func (e *Engine) takeTokens(g *group, h *entry, n int64) {
	for _, b := range g.buckets {
		b.take(n)
	}
	for _, r := range g.tenantLimits {
		r.bucket(h.tnt.name, n).take(n)
	}
	for _, r := range g.keyLimits {
		r.bucket(h.job.Key, n).take(n)
	}
}

// bucketsOf returns every bucket the job draws on.
func (e *Engine) bucketsOf(en *entry, now int64) []*bucket {
	var out []*bucket
	for _, r := range e.limits {
		if !r.matches(en.typ.name, en.ln.name) {
			continue
		}
		switch r.kind {
		case byNone:
			out = append(out, r.bucket("", now))
		case byType:
			out = append(out, r.bucket(en.typ.name, now))
		case byLane:
			out = append(out, r.bucket(en.ln.name, now))
		case byLabel:
			if v, ok := labelValue(en.job.Labels, r.label); ok {
				out = append(out, r.bucket(v, now))
			}
		case byTenant:
			out = append(out, r.bucket(en.tnt.name, now))
		case byKey:
			out = append(out, r.bucket(en.job.Key, now))
		}
	}
	return out
}

// emptyBucket returns the first of the job's buckets without a token at
// now, or nil.
func (e *Engine) emptyBucket(en *entry, now int64) *bucket {
	if len(e.limits) == 0 {
		return nil
	}
	for _, b := range e.bucketsOf(en, now) {
		if !b.ready(now) {
			return b
		}
	}
	return nil
}

// rateWake is a wake-up at a token time: of a job waiting for its key's
// token, or of a bucket (its parked classes, and the owner's next call).
type rateWake struct {
	at int64
	en *entry
	b  *bucket
}

func (w rateWake) live() bool {
	if w.en != nil {
		return w.en.state == stateRateWait && w.en.wakeAt == w.at
	}
	return w.b.wakeAt == w.at
}

// wakeHeap is a min-heap of wake-ups by time.
type wakeHeap []rateWake

func (h *wakeHeap) push(w rateWake) {
	*h = append(*h, w)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *wakeHeap) pop() rateWake {
	s := *h
	top, n := s[0], len(s)-1
	s[0] = s[n]
	s[n] = rateWake{}
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s[l].at < s[m].at {
			m = l
		}
		if r := l + 1; r < n && s[r].at < s[m].at {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// wakeBucket schedules a wake-up at the bucket's next token, once.
func (e *Engine) wakeBucket(b *bucket) {
	at := b.nextToken()
	if b.wakeAt == at {
		return
	}
	b.wakeAt = at
	e.wakes.push(rateWake{at: at, b: b})
}

// wakeTokens brings back what waited for a token that has come by now:
// parked classes go back into their heaps, waiting jobs into their
// classes (with their enqueue time: they keep their age).
func (e *Engine) wakeTokens(now time.Time) {
	n := now.UnixNano()
	for len(e.wakes) > 0 && e.wakes[0].at <= n {
		w := e.wakes.pop()
		if !w.live() {
			continue
		}
		if w.en != nil {
			w.en.wakeAt = 0
			e.enqueue(w.en, now)
			continue
		}
		w.b.wakeAt = 0
		parked := w.b.parked
		w.b.parked = nil
		for _, c := range parked {
			c.tenantParked = false
			c.grp.place(c, n)
		}
	}
	e.sweepBuckets(n)
}

// NextToken returns the earliest time a job held back by a rate limit may
// get its token: when an owner with nothing else to do should call Next
// again. It reports false when no job waits for a token.
func (e *Engine) NextToken() (time.Time, bool) {
	for len(e.wakes) > 0 {
		if e.wakes[0].live() {
			return time.Unix(0, e.wakes[0].at), true
		}
		e.wakes.pop()
	}
	return time.Time{}, false
}

// sweepBuckets forgets per-tenant and per-key buckets that are full again
// and that nothing waits on (a full bucket is what a new one is), once
// their number has doubled since the last sweep: amortised O(1).
func (e *Engine) sweepBuckets(now int64) {
	total := 0
	for _, r := range e.limits {
		if r.kind == byKey || r.kind == byTenant {
			total += len(r.buckets)
		}
	}
	if total <= e.sweepAt {
		return
	}
	total = 0
	for _, r := range e.limits {
		if r.kind != byKey && r.kind != byTenant {
			continue
		}
		for v, b := range r.buckets {
			if b.refill(now); b.level == r.full && b.wakeAt == 0 && len(b.parked) == 0 {
				delete(r.buckets, v)
			}
		}
		total += len(r.buckets)
	}
	e.sweepAt = max(2*total, minSweep)
}

// minSweep is the bucket count below which no sweep is made.
const minSweep = 1024

// RateLimitStats is a rate limit and the state of its buckets at a moment.
type RateLimitStats struct {
	RateLimit
	Buckets []BucketStats // by value
}

// BucketStats is one bucket's level.
type BucketStats struct {
	Value     string
	Tokens    float64   // whole and partial tokens now
	NextToken time.Time // when the next whole token comes (now if one is there)
}

// RateLimits returns every rate limit and its buckets at now. Buckets
// never used, or forgotten once full, are not listed: they are full.
func (e *Engine) RateLimits(now time.Time) []RateLimitStats {
	n := now.UnixNano()
	out := make([]RateLimitStats, 0, len(e.limits))
	for _, r := range e.limits {
		s := RateLimitStats{RateLimit: r.RateLimit}
		for _, v := range slices.Sorted(maps.Keys(r.buckets)) {
			b := r.buckets[v]
			b.refill(n)
			s.Buckets = append(s.Buckets, BucketStats{Value: v, Tokens: float64(b.level) / float64(r.cost),
				NextToken: time.Unix(0, max(b.nextToken(), n))})
		}
		out = append(out, s)
	}
	return out
}

// RateBlock is what Explain says of an empty bucket.
type RateBlock struct {
	Limit     string // the limit's name
	By        string
	Value     string // the bucket's value of By ("" for one bucket)
	Rate      int64
	Per       time.Duration
	Burst     int64
	NextToken time.Time
}

func (b *bucket) block() RateBlock {
	r := b.lim
	return RateBlock{Limit: r.Name, By: r.By, Value: b.value, Rate: r.Rate, Per: r.Per, Burst: r.Burst, NextToken: time.Unix(0, b.nextToken()).UTC()}
}

// describe names what the bucket limits: "type call-stripe", "key
// cus_1", "tenant acme", "label region=eu", "lane batch".
func (b *bucket) describe() string {
	r := b.lim
	switch r.kind {
	case byType:
		return "type " + b.value
	case byLane:
		return "lane " + b.value
	case byTenant:
		return "tenant " + b.value
	case byKey:
		return "key " + b.value
	case byLabel:
		return "label " + r.label + "=" + b.value
	}
	var parts []string
	if r.Type != "" {
		parts = append(parts, "type "+r.Type)
	}
	if r.Lane != "" {
		parts = append(parts, "lane "+r.Lane)
	}
	if len(parts) == 0 {
		return "every job"
	}
	return strings.Join(parts, ", ")
}

func rateMessage(b *bucket) string {
	r := b.lim
	return fmt.Sprintf("rate limit %s: %s, %d per %s (burst %d), next token at %s",
		r.Name, b.describe(), r.Rate, r.Per, r.Burst, time.Unix(0, b.nextToken()).UTC().Format(time.RFC3339Nano))
}
