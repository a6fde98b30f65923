package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func int64p(v int64) *int64 { return &v }

// limitCfg is one lane with aging off, the given rate limits, and
// tenants.
func limitCfg(limits ...RateLimit) Config {
	return Config{Lanes: oneLane(lc().L()), RateLimits: limits}
}

func TestRateLimitRefillAndBurst(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "stripe", Type: "stripe", Rate: 2, Per: time.Second, Burst: 3}),
		wrk("w").slots(100).W())
	for i := range 20 {
		submitAll(t, e, at(0), job("s"+string(rune('a'+i))).typ("stripe"))
	}
	steps := []struct {
		ms   int
		want int
	}{
		{0, 3},    // the burst
		{499, 0},  // 0.998 tokens
		{500, 1},  // one token per 500 ms
		{999, 0},  //
		{1000, 1}, //
		{5000, 3}, // four seconds refill at most the burst
		{5001, 0},
	}
	for _, s := range steps {
		if got := len(e.Dispatch(atMS(s.ms), 0)); got != s.want {
			t.Fatalf("at %d ms: %d admitted, want %d", s.ms, got, s.want)
		}
	}
	next, ok := e.NextToken()
	if !ok || !next.Equal(atMS(5500)) {
		t.Fatalf("NextToken = %v, %v; want %v", next, ok, atMS(5500))
	}
}

func TestRateLimitExactNextTokenForUnevenRates(t *testing.T) {
	// 3 per second: tokens at 333 333 334 ns, 666 666 667 ns, 1 s (ceil).
	e := newTestEngine(t, limitCfg(RateLimit{Name: "r", Rate: 3, Per: time.Second, Burst: 1}), wrk("w").slots(10).W())
	for _, id := range []string{"a", "b", "c", "d"} {
		submitAll(t, e, at(0), job(id))
	}
	if n := len(e.Dispatch(at(0), 0)); n != 1 {
		t.Fatalf("burst: %d admitted", n)
	}
	next, _ := e.NextToken()
	if want := testT0.Add(333333334); !next.Equal(want) {
		t.Fatalf("NextToken = %v, want %v", next.Sub(testT0), want.Sub(testT0))
	}
	if n := len(e.Dispatch(next.Add(-1), 0)); n != 0 {
		t.Fatalf("1 ns before the token: %d admitted", n)
	}
	if n := len(e.Dispatch(next, 0)); n != 1 {
		t.Fatalf("at the token: %d admitted", n)
	}
	if n := len(e.Dispatch(at(1), 0)); n != 1 {
		t.Fatalf("at 1 s: %d admitted, want 1 (3 in the first second with burst 1)", n)
	}
}

func TestRateLimitNoHeadOfLineBlocking(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "stripe", Type: "stripe", Rate: 1, Per: time.Minute, Burst: 1}),
		wrk("w").slots(10).W())
	submitAll(t, e, at(0),
		job("s1").typ("stripe").prio(900), job("s2").typ("stripe").prio(900), job("s3").typ("stripe").prio(900),
		job("o1").typ("other").prio(100), job("o2").typ("other").prio(100))
	got := admittedIDs(e, at(0))
	if diff := cmp.Diff([]string{"s1", "o1", "o2"}, got); diff != "" {
		t.Fatalf("admitted (-want +got):\n%s", diff)
	}
	x, err := e.Explain("s2", at(1))
	if err != nil {
		t.Fatal(err)
	}
	if x.Code != CodeRateLimited || x.RateLimit == nil || x.RateLimit.Limit != "stripe" || !x.RateLimit.NextToken.Equal(at(60)) {
		t.Fatalf("Explain(s2) = %+v", x)
	}
	if !strings.Contains(x.Message, "type stripe") || !strings.Contains(x.Message, "next token at") {
		t.Fatalf("message %q", x.Message)
	}
}

func TestRateLimitPerKeyBuckets(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "per-customer", Rate: 5, Per: time.Second, Burst: 1, By: "key"}),
		wrk("w").slots(10).W())
	// One class (same tenant, fairness key, priority): c1's second job
	// must not hold back c2's behind it.
	submitAll(t, e, at(0), job("a").key("c1").enq(at(0)), job("b").key("c1").enq(atMS(1)),
		job("c").key("c2").enq(atMS(2)), job("d").key("c1").enq(atMS(3)))
	if diff := cmp.Diff([]string{"a", "c"}, admittedIDs(e, atMS(10))); diff != "" {
		t.Fatalf("admitted (-want +got):\n%s", diff)
	}
	x, _ := e.Explain("b", atMS(100))
	if x.Code != CodeRateLimited || x.RateLimit.Value != "c1" || !x.RateLimit.NextToken.Equal(atMS(210)) {
		t.Fatalf("Explain(b) = %+v %+v", x, x.RateLimit)
	}
	if r, _ := e.Reason("d", atMS(100)); r != CodeRateLimited {
		t.Fatalf("Reason(d) = %s", r)
	}
	if next, ok := e.NextToken(); !ok || !next.Equal(atMS(210)) {
		t.Fatalf("NextToken = %v %v", next, ok)
	}
	// The waiting job keeps its age: b (enqueued first) goes before d.
	if diff := cmp.Diff([]string{"b"}, admittedIDs(e, atMS(210))); diff != "" {
		t.Fatalf("at 210 ms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d"}, admittedIDs(e, atMS(410))); diff != "" {
		t.Fatalf("at 410 ms (-want +got):\n%s", diff)
	}
}

func TestRateLimitWaitingJobCancelHoldReprioritize(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "k", Rate: 1, Per: time.Second, Burst: 1, By: "key"}),
		wrk("w").slots(10).W())
	submitAll(t, e, at(0), job("a").key("x"), job("b").key("x"), job("c").key("x"), job("d").key("x"))
	admittedIDs(e, at(0)) // a runs; b, c, d wait for x's token
	if _, err := e.Cancel("b", at(0)); err != nil {
		t.Fatal(err)
	}
	if err := e.Hold("c", at(0)); err != nil {
		t.Fatal(err)
	}
	if err := e.Reprioritize("d", 900, at(0)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d"}, admittedIDs(e, at(1))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if err := e.Release("c", at(1)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c"}, admittedIDs(e, at(2))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if total, _ := e.Len(); total != 3 {
		t.Fatalf("Len = %d, want 3 (a, c, d running)", total)
	}
}

func TestRateLimitPerTenantParksTheClass(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "t", Rate: 1, Per: time.Second, Burst: 1, By: "tenant"}),
		wrk("w").slots(10).W())
	submitAll(t, e, at(0), job("a1").tenant("a").prio(900), job("a2").tenant("a").prio(900),
		job("b1").tenant("b"), job("b2").tenant("b"))
	if diff := cmp.Diff([]string{"a1", "b1"}, admittedIDs(e, at(0))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	x, _ := e.Explain("a2", atMS(10))
	if x.Code != CodeRateLimited || x.RateLimit.Value != "a" || !strings.Contains(x.Message, "tenant a") {
		t.Fatalf("Explain(a2) = %+v", x)
	}
	if diff := cmp.Diff([]string{"a2", "b2"}, admittedIDs(e, at(1))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestRateLimitByLabelAndLane(t *testing.T) {
	e := newTestEngine(t, Config{
		Lanes: map[string]LaneConfig{"a": lc().L(), "b": lc().L()},
		RateLimits: []RateLimit{
			{Name: "region", Rate: 1, Per: time.Second, Burst: 1, By: "label:region"},
			{Name: "lane-b", Lane: "b", Rate: 1, Per: time.Second, Burst: 1},
		},
	}, wrk("w").slots(10).labels("region=eu", "region=us").W())
	submitAll(t, e, at(0),
		job("eu1").lane("a").labels("region=eu"), job("eu2").lane("a").labels("region=eu"),
		job("us1").lane("a").labels("region=us"), job("none1").lane("a"), job("none2").lane("a"),
		job("b1").lane("b"), job("b2").lane("b"))
	got := admittedIDs(e, at(0))
	slices.Sort(got)
	if diff := cmp.Diff([]string{"b1", "eu1", "none1", "none2", "us1"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for id, want := range map[string]string{"eu2": "rate limit region: label region=eu", "b2": "rate limit lane-b: lane b"} {
		x, _ := e.Explain(id, at(0))
		if x.Code != CodeRateLimited || !strings.HasPrefix(x.Message, want) {
			t.Fatalf("Explain(%s) = %s %q", id, x.Code, x.Message)
		}
	}
}

func TestRateLimitedJobHoldsNoReservation(t *testing.T) {
	// A wide job, best ranked but out of tokens, must not hold the worker
	// idle for itself: small jobs keep flowing onto it.
	e := newTestEngine(t, limitCfg(RateLimit{Name: "wide", Type: "wide", Rate: 1, Per: time.Hour, Burst: 1}),
		wrk("w").slots(4).cpu(4000).W())
	submitAll(t, e, at(0), job("w0").typ("wide").cpu(4000).prio(900))
	admittedIDs(e, at(0)) // spends the token
	finishOK(t, e, "w0", at(1), Succeeded)
	submitAll(t, e, at(1), job("w1").typ("wide").cpu(4000).prio(900), job("s1").cpu(1000), job("s2").cpu(1000))
	submitAll(t, e, at(1), job("r").cpu(1000))
	admittedIDs(e, at(1))
	if rs := e.Reservations(at(2)); len(rs) != 0 {
		t.Fatalf("reservations %+v, want none", rs)
	}
	submitAll(t, e, at(2), job("s3").cpu(1000))
	if diff := cmp.Diff([]string{"s3"}, admittedIDs(e, at(2))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if x, _ := e.Explain("w1", at(2)); x.Code != CodeRateLimited {
		t.Fatalf("Explain(w1) = %s", x.Code)
	}
}

// A withdrawn admission (Unadmit) keeps its token spent: the simulator
// unadmits preempted runs that did start, and a limit errs towards fewer
// starts.
func TestRateLimitUnadmitKeepsTheTokenSpent(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Minute, Burst: 1}), wrk("w").slots(2).W())
	submitAll(t, e, at(0), job("a"), job("b"))
	if diff := cmp.Diff([]string{"a"}, admittedIDs(e, at(0))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if err := e.Unadmit("a", at(1)); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Dispatch(at(1), 0)); n != 0 {
		t.Fatalf("after Unadmit: %d admitted, want 0 until the next token", n)
	}
	if diff := cmp.Diff([]string{"a"}, admittedIDs(e, at(60))); diff != "" {
		t.Fatalf("at the next token (-want +got):\n%s", diff)
	}
}

func TestRateLimitStatsAndSweep(t *testing.T) {
	e := newTestEngine(t, limitCfg(RateLimit{Name: "k", Rate: 1, Per: time.Second, Burst: 2, By: "key"}), wrk("w").slots(9000).W())
	for i := range 3000 {
		submitAll(t, e, at(0), job("j"+strings.Repeat("x", i%3)+string(rune(i))).key("k"+string(rune(i))))
	}
	admittedIDs(e, at(0))
	st := e.RateLimits(at(0))
	if len(st) != 1 || len(st[0].Buckets) != 3000 || st[0].Buckets[0].Tokens != 1 {
		t.Fatalf("stats: %d limits, %d buckets", len(st), len(st[0].Buckets))
	}
	// Full buckets are forgotten once the count has doubled since the
	// last sweep: 3000 more keys later, the first 3000 (full again) go.
	for i := range 4000 {
		submitAll(t, e, at(10), job("n"+string(rune(i))).key("n"+string(rune(i))))
	}
	admittedIDs(e, at(10))
	if st := e.RateLimits(at(10)); len(st[0].Buckets) > 4000 {
		t.Fatalf("after refill: %d buckets kept, want the 4000 new at most", len(st[0].Buckets))
	}
}

func TestRateLimitAndQuotaValidation(t *testing.T) {
	ok := RateLimit{Name: "r", Rate: 1, Per: time.Second}
	tests := map[string]struct {
		cfg  Config
		want string
	}{
		"rate 0":        {limitCfg(RateLimit{Name: "r", Per: time.Second}), "rate_limits.r.rate: must be >= 1"},
		"rate negative": {limitCfg(RateLimit{Name: "r", Rate: -3, Per: time.Second}), "rate_limits.r.rate: must be >= 1"},
		"per 0":         {limitCfg(RateLimit{Name: "r", Rate: 1}), "rate_limits.r.per: must be a duration > 0"},
		"burst < 0":     {limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Second, Burst: -1}), "rate_limits.r.burst: must be >= 1"},
		"unknown by":    {limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Second, By: "colour"}), `rate_limits.r.by: unknown field "colour"`},
		"label no name": {limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Second, By: "label:"}), `rate_limits.r.by: unknown field "label:"`},
		"unknown lane":  {limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Second, Lane: "nope"}), `rate_limits.r.lane: unknown lane "nope"`},
		"no name":       {limitCfg(RateLimit{Rate: 1, Per: time.Second}), "rate_limits[0].name: required"},
		"twice":         {limitCfg(ok, ok), "rate_limits.r: name used twice"},
		"huge burst":    {limitCfg(RateLimit{Name: "r", Rate: 1, Per: time.Hour, Burst: 1 << 40}), "rate_limits.r.burst:"},
		"quota below 0": {Config{Tenants: map[string]TenantConfig{"a": {Quota: Quota{GPU: int64p(-1)}}}}, "tenants.a.quota.gpu: must be >= 0"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
	e, err := New(limitCfg(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Config().RateLimits[0].Burst; got != 1 {
		t.Fatalf("default burst = %d, want the rate", got)
	}
}
