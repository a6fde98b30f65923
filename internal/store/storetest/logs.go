package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func chunk(job string, attempt int, seq int64, stream store.Stream) store.LogChunk {
	return store.LogChunk{JobID: job, Attempt: attempt, Stream: stream, Seq: seq,
		At:   T0.Add(time.Duration(attempt)*time.Minute + time.Duration(seq)*time.Millisecond),
		Data: fmt.Appendf(nil, "%s a%d s%d\n", stream, attempt, seq)}
}

func appendLogs(t *testing.T, s store.Store, chunks ...store.LogChunk) {
	t.Helper()
	write(t, s, func(w store.Writer) error { return w.LogAppend(ctx, chunks) })
}

func logKeys(cs []store.LogChunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%d/%d", c.Attempt, c.Seq))
	}
	return out
}

func testLogs(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0), newJob("other", "t", T0))
	// Out of order, in several appends, both streams.
	appendLogs(t, s, chunk("j", 1, 3, store.Stdout), chunk("j", 1, 1, store.Stdout), chunk("j", 1, 2, store.Stderr))
	appendLogs(t, s, chunk("j", 2, 2, store.Stdout), chunk("j", 1, 5, store.Stdout), chunk("j", 1, 4, store.Stderr))
	appendLogs(t, s, chunk("j", 2, 1, store.Stderr), chunk("other", 1, 1, store.Stdout))
	// A resent chunk is ignored: the first copy stays.
	resent := chunk("j", 1, 2, store.Stderr)
	resent.Data = []byte("different")
	appendLogs(t, s, resent)

	all, err := s.LogList(ctx, store.LogListParams{JobID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "all", []string{"1/1", "1/2", "1/3", "1/4", "1/5", "2/1", "2/2"}, logKeys(all))
	diff(t, "chunk", chunk("j", 1, 2, store.Stderr), all[1])

	cases := map[string]struct {
		p    store.LogListParams
		want []string
	}{
		"attempt":           {store.LogListParams{JobID: "j", Attempt: 1}, []string{"1/1", "1/2", "1/3", "1/4", "1/5"}},
		"attempt after seq": {store.LogListParams{JobID: "j", Attempt: 1, AfterSeq: 3}, []string{"1/4", "1/5"}},
		"limit":             {store.LogListParams{JobID: "j", Attempt: 1, Limit: 2}, []string{"1/1", "1/2"}},
		"resume across attempts": {store.LogListParams{JobID: "j", AfterAttempt: 1, AfterSeq: 4},
			[]string{"1/5", "2/1", "2/2"}},
		"resume at attempt end": {store.LogListParams{JobID: "j", AfterAttempt: 1, AfterSeq: 5}, []string{"2/1", "2/2"}},
		"stream":                {store.LogListParams{JobID: "j", Stream: store.Stderr}, []string{"1/2", "1/4", "2/1"}},
		"attempt 2 stdout":      {store.LogListParams{JobID: "j", Attempt: 2, Stream: store.Stdout}, []string{"2/2"}},
		"past the end":          {store.LogListParams{JobID: "j", Attempt: 2, AfterSeq: 2}, nil},
		"unknown job":           {store.LogListParams{JobID: "nope"}, nil},
	}
	for name, c := range cases {
		got, err := s.LogList(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diff(t, name, c.want, logKeys(got))
	}
}

func testLogsAtomic(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	write(t, s, func(w store.Writer) error {
		wantErr(t, "missing job", w.LogAppend(ctx, []store.LogChunk{chunk("j", 1, 1, store.Stdout), chunk("nope", 1, 1, store.Stdout)}), store.ErrNotFound)
		bad := chunk("j", 1, 2, store.Stdout)
		bad.Stream = "stdlog"
		wantErr(t, "bad stream", w.LogAppend(ctx, []store.LogChunk{chunk("j", 1, 3, store.Stdout), bad}), store.ErrInvalid)
		return nil
	})
	got, err := s.LogList(ctx, store.LogListParams{JobID: "j"})
	if err != nil || len(got) != 0 {
		t.Fatalf("logs after failed appends: %v, %v", logKeys(got), err)
	}
}

func testEvents(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "acme", T0), newJob("b", "globex", T0))
	events := []store.Event{
		{JobID: "a", Attempt: 0, Tenant: "acme", Type: store.EventSubmitted, At: T0, Actor: "tenant:acme",
			Detail: json.RawMessage(`{"priority": 500, "lane": "batch"}`)},
		{JobID: "b", Tenant: "globex", Type: store.EventSubmitted, At: T0, Actor: "tenant:globex"},
		{Type: store.EventWorkerRegistered, At: T0.Add(time.Second), Actor: "worker:w1", Detail: json.RawMessage(`{"slots":4}`)},
		{JobID: "a", Attempt: 1, Tenant: "acme", Type: store.EventLeased, At: T0.Add(2 * time.Second), Actor: "system"},
	}
	write(t, s, func(w store.Writer) error {
		if err := w.EventAppend(ctx, events[:3]); err != nil {
			return err
		}
		return w.EventAppend(ctx, events[3:])
	})
	for i := 1; i < len(events); i++ {
		if events[i].ID <= events[i-1].ID || events[0].ID <= 0 {
			t.Fatalf("ids not increasing: %d then %d", events[i-1].ID, events[i].ID)
		}
	}
	more := []store.Event{{JobID: "a", Tenant: "acme", Type: store.EventSucceeded, At: T0.Add(time.Minute)},
		{Tenant: "acme", Type: store.EventScheduleMissed, At: T0.Add(time.Minute), Actor: "system", ScheduleID: "s1",
			Detail: json.RawMessage(`{"count": 3}`)}}
	write(t, s, func(w store.Writer) error { return w.EventAppend(ctx, more) })
	if more[0].ID <= events[3].ID {
		t.Fatalf("id of a later append %d <= %d", more[0].ID, events[3].ID)
	}
	events = append(events, more...)

	all, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "all events", events, all)

	byID := func(es []store.Event) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	cases := map[string]struct {
		p    store.EventListParams
		want []store.Event
	}{
		"job":      {store.EventListParams{JobID: "a"}, []store.Event{events[0], events[3], events[4]}},
		"tenant":   {store.EventListParams{Tenant: "globex"}, []store.Event{events[1]}},
		"schedule": {store.EventListParams{ScheduleID: "s1"}, []store.Event{events[5]}},
		"after":    {store.EventListParams{AfterID: events[2].ID}, events[3:]},
		"types": {store.EventListParams{Types: []store.EventType{store.EventSubmitted, store.EventWorkerRegistered}},
			events[:3]},
		"limit":         {store.EventListParams{Limit: 2}, events[:2]},
		"job and after": {store.EventListParams{JobID: "a", AfterID: events[3].ID}, events[4:5]},
	}
	for name, c := range cases {
		got, err := s.EventList(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diff(t, name, byID(c.want), byID(got))
	}

	write(t, s, func(w store.Writer) error {
		wantErr(t, "no type", w.EventAppend(ctx, []store.Event{{At: T0}}), store.ErrInvalid)
		wantErr(t, "bad detail", w.EventAppend(ctx, []store.Event{{Type: "x", At: T0, Detail: json.RawMessage("{")}}), store.ErrInvalid)
		return nil
	})
}
