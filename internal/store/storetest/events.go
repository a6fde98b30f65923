package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testEventDeleteBefore: events older than the cutoff go, oldest first and
// at most limit at a time; the first event inside the retention stops the
// purge; what is left of the backlog is reported.
func testEventDeleteBefore(t *testing.T, s store.Store) {
	var evs []store.Event
	for i := range 5 {
		evs = append(evs, store.Event{Type: store.EventSubmitted, JobID: jobID("j", i), At: T0.Add(time.Duration(i) * time.Minute)})
	}
	write(t, s, func(w store.Writer) error { return w.EventAppend(ctx, evs) })
	purge := func(before time.Time, limit int) store.Purged {
		t.Helper()
		var p store.Purged
		write(t, s, func(w store.Writer) (err error) {
			p, err = w.EventDeleteBefore(ctx, before, limit)
			return err
		})
		return p
	}
	cutoff := T0.Add(3 * time.Minute) // events 0, 1 and 2 are due
	if p, want := purge(cutoff, 2), (store.Purged{Deleted: 2, NextAt: T0.Add(2 * time.Minute)}); p != want {
		t.Fatalf("first purge: %+v, want %+v", p, want)
	}
	if p, want := purge(cutoff, 2), (store.Purged{Deleted: 1}); p != want {
		t.Fatalf("second purge: %+v, want %+v", p, want)
	}
	if p, want := purge(cutoff, 2), (store.Purged{}); p != want {
		t.Fatalf("third purge: %+v, want %+v", p, want)
	}
	left, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, e := range left {
		jobs = append(jobs, e.JobID)
	}
	diff(t, "events left", []string{jobID("j", 3), jobID("j", 4)}, jobs)
}

// testEventActorFilter: the actor filter takes the actor itself, a role
// (every key of it: "admin" finds "admin key ID (name)"), or a key id.
func testEventActorFilter(t *testing.T, s store.Store) {
	evs := []store.Event{
		{Type: store.EventCancelled, At: T0, Actor: "admin key 1111aaaa2222bbbb (deploy)"},
		{Type: store.EventCancelled, At: T0, Actor: "admin key 3333cccc4444dddd (admin_keys[0])"},
		{Type: store.EventCancelled, At: T0, Actor: "tenant:acme key 5555eeee6666ffff (ci)"},
		{Type: store.EventCancelled, At: T0, Actor: "tenant:ac%me key 7777aaaa8888bbbb"},
		{Type: store.EventCancelled, At: T0, Actor: "system"},
		{Type: store.EventCancelled, At: T0, Actor: "administrator"},
	}
	write(t, s, func(w store.Writer) error { return w.EventAppend(ctx, evs) })
	for actor, want := range map[string][]int64{
		"admin":            {1, 2},
		"tenant:acme":      {3},
		"tenant:ac%me":     {4},
		"3333cccc4444dddd": {2},
		"system":           {5},
		"administrator":    {6},
		"tenant:ac":        nil,
	} {
		got, err := s.EventList(ctx, store.EventListParams{Actor: actor})
		if err != nil {
			t.Fatal(err)
		}
		var idx []int64
		for _, e := range got {
			for i, ev := range evs {
				if ev.ID == e.ID {
					idx = append(idx, int64(i+1))
				}
			}
		}
		diff(t, "actor="+actor, want, idx)
	}
}
