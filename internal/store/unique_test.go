package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestUniqueHashComparesOnlyTheRulesFields(t *testing.T) {
	byTypeKey := &UniqueRule{By: []UniqueField{UniqueByType, UniqueByKey}}
	j := Job{Tenant: "acme", Type: "reindex", Key: "repo-1", Lane: "default", Payload: []byte(`{"a":1,"b":[2,3]}`)}
	other := j
	other.Lane, other.Payload, other.Tenant = "batch", []byte(`{"c":1}`), "globex"
	if byTypeKey.UniqueHash(&j) != byTypeKey.UniqueHash(&other) {
		t.Errorf("lane, payload and tenant changed a rule on type and key")
	}
	other = j
	other.Key = "repo-2"
	if byTypeKey.UniqueHash(&j) == byTypeKey.UniqueHash(&other) {
		t.Errorf("another key hashed the same")
	}
	reordered := &UniqueRule{By: []UniqueField{UniqueByKey, UniqueByType, UniqueByKey}}
	if byTypeKey.UniqueHash(&j) != reordered.UniqueHash(&j) {
		t.Errorf("the order of by, or a repeat, changed the hash")
	}
	// The field names are in the hash: type "x" and key "" differ from
	// type "" and key "x", and a rule on type alone from one on type and key.
	a, b := Job{Type: "x"}, Job{Key: "x"}
	if byTypeKey.UniqueHash(&a) == byTypeKey.UniqueHash(&b) {
		t.Errorf("values moved between fields hashed the same")
	}
	if (&UniqueRule{By: []UniqueField{UniqueByType}}).UniqueHash(&j) == byTypeKey.UniqueHash(&j) {
		t.Errorf("rules on other fields hashed the same")
	}
	byPayload := &UniqueRule{By: []UniqueField{UniqueByPayload}}
	spaced := j
	spaced.Payload = []byte(` { "b" : [2, 3], "a" : 1 } `)
	if byPayload.UniqueHash(&j) != byPayload.UniqueHash(&spaced) {
		t.Errorf("the payload's key order or spacing changed the hash")
	}
}

func TestUniqueRuleHolds(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	r := &UniqueRule{By: []UniqueField{UniqueByType}, States: []State{StatePending, StateRunning}, Period: 10 * time.Minute}
	for _, c := range []struct {
		state   State
		created time.Time
		want    bool
	}{
		{StatePending, now.Add(-time.Minute), true},
		{StateRunning, now.Add(-10*time.Minute + time.Microsecond), true},
		{StateRunning, now.Add(-10 * time.Minute), false}, // a period old
		{StateLeased, now, false},                         // not in the rule's states
		{StateSucceeded, now, false},
		{"", now, false}, // the holder is gone
	} {
		if got := r.Holds(c.state, c.created, now); got != c.want {
			t.Errorf("Holds(%s, now-%v) = %v, want %v", c.state, now.Sub(c.created), got, c.want)
		}
	}
	r.Period = 0
	if !r.Holds(StatePending, now.Add(-300*24*time.Hour), now) {
		t.Errorf("a rule without a period let an old pending job go")
	}
}

func TestUniqueRuleNormalizesAndRoundTrips(t *testing.T) {
	r := UniqueRule{By: []UniqueField{UniqueByType, UniqueByKey, UniqueByType},
		States: []State{StateRunning, StatePending, StateRunning}, Period: 90 * time.Second}
	r.Normalize()
	want := UniqueRule{By: []UniqueField{UniqueByKey, UniqueByType}, States: []State{StatePending, StateRunning}, Period: 90 * time.Second}
	if d := cmp.Diff(want, r); d != "" {
		t.Fatalf("normalized (-want +got):\n%s", d)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"by":["key","type"],"states":["pending","running"],"period_ms":90000}` {
		t.Errorf("stored form %s", b)
	}
	var back UniqueRule
	if err := json.Unmarshal(b, &back); err != nil || !cmp.Equal(r, back) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}
