package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The cost views show what fair queuing ranks by: each fairness key's
// accumulated cost (lowest first: the next served among equal
// priorities) and each learned (type, key) run time, and leave out what
// the next decision would forget.
func TestCostViewsShowWhatFairQueuingRanksBy(t *testing.T) {
	cfg := Config{
		Lanes: oneLane(lc().L()),
		Types: map[string]TypeConfig{"five": {DefaultCost: 5}, "three": {DefaultCost: 3}},
		Cost:  CostConfig{KeyTTL: time.Minute, EstimateTTL: time.Hour, Alpha: 0.5},
	}
	e := newTestEngine(t, cfg, wrk("w").slots(4).W())
	submitAll(t, e, at(0), job("a").typ("five").key("r1").fk("k1"), job("b").typ("three").key("r2").fk("k2"),
		job("c").typ("three").key("r2").fk("k2"))
	admittedIDs(e, at(0))
	finishOK(t, e, "a", at(9), Succeeded) // observed 9 s: 0.5·9 + 0.5·5 = 7

	want := []FairKeyCost{
		{Key: "k1", Cost: 5, IdleSince: at(9)}, // idle: a ended, nothing queued
		{Key: "k2", Cost: 6, Jobs: 2},
	}
	if diff := cmp.Diff(want, e.FairKeyCosts(at(9))); diff != "" {
		t.Errorf("FairKeyCosts (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]LearnedCost{{Type: "five", Key: "r1", Seconds: 7, LastUsed: at(9)}}, e.LearnedCosts(at(9))); diff != "" {
		t.Errorf("LearnedCosts (-want +got)\n%s", diff)
	}
	// k1 idle for KeyTTL, the estimate unused for EstimateTTL: gone from the views
	if got := e.FairKeyCosts(at(9 + 60)); len(got) != 1 || got[0].Key != "k2" {
		t.Errorf("after KeyTTL: %+v, want k2 only", got)
	}
	if got := e.LearnedCosts(at(9 + 3600)); len(got) != 0 {
		t.Errorf("after EstimateTTL: %+v, want none", got)
	}
}
