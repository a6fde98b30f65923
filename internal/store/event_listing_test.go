package store

import (
	"reflect"
	"testing"
	"time"
)

// Matches is EventList's WHERE for the events the dispatcher answers
// (doc.go, "The merged feed"): ids, job, tenant, types, actor (itself, a
// role's keys, a key by id) and the time range in microseconds.
func TestEventListParamsMatches(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 1500, time.UTC) // 1.5 µs past
	e := LeasedEvent(7, "j", 1, "acme", at, "w1")
	us := time.Microsecond
	for _, c := range []struct {
		name string
		p    EventListParams
		want bool
	}{
		{"none", EventListParams{}, true},
		{"after", EventListParams{AfterID: 6}, true},
		{"after it", EventListParams{AfterID: 7}, false},
		{"up to it", EventListParams{UpToID: 7}, true},
		{"up to before it", EventListParams{UpToID: 6}, false},
		{"job", EventListParams{JobID: "k"}, false},
		{"tenant", EventListParams{Tenant: "acme"}, true},
		{"other tenant", EventListParams{Tenant: "shop"}, false},
		{"types", EventListParams{Types: []EventType{EventStarted, EventLeased}}, true},
		{"other types", EventListParams{Types: []EventType{EventStarted}}, false},
		{"actor", EventListParams{Actor: "system"}, true},
		{"other actor", EventListParams{Actor: "worker:w1"}, false},
		{"since its microsecond", EventListParams{Since: at.Truncate(us)}, true},
		{"since the next", EventListParams{Since: at.Truncate(us).Add(us)}, false},
		{"until its microsecond", EventListParams{Until: at.Truncate(us)}, false},
		{"until the next", EventListParams{Until: at.Truncate(us).Add(us)}, true},
	} {
		if got := c.p.Matches(&e); got != c.want {
			t.Errorf("%s: Matches = %v, want %v", c.name, got, c.want)
		}
	}
	for actor, want := range map[string]bool{"admin": true, "1a2b": true, "tenant:acme": false, "admin key": false} {
		if got := actorMatches("admin key 1a2b (ops)", actor); got != want {
			t.Errorf("actor %q: %v, want %v", actor, got, want)
		}
	}
}

// MergeEvents keeps one copy of an id in both answers, in the page's
// order, cut to its limit.
func TestMergeEvents(t *testing.T) {
	ev := func(ids ...int64) []Event {
		var out []Event
		for _, id := range ids {
			out = append(out, Event{ID: id})
		}
		return out
	}
	if got := MergeEvents(EventListParams{Limit: 4}, ev(2, 5, 9), ev(1, 5, 6)); !reflect.DeepEqual(got, ev(1, 2, 5, 6)) {
		t.Errorf("oldest first: %v", got)
	}
	if got := MergeEvents(EventListParams{Limit: 3, Newest: true}, ev(9, 5, 2), ev(6, 5, 1)); !reflect.DeepEqual(got, ev(9, 6, 5)) {
		t.Errorf("newest first: %v", got)
	}
}
