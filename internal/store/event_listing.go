package store

import (
	"cmp"
	"slices"
	"strings"
)

// Listing events outside the store. The leader's dispatcher answers the
// audit feed's live attempt events of unfinished jobs (doc.go, "The hot
// row and its indexes"); these helpers give that answer EventList's
// filters and order, and merge it with the store's.

// Matches reports whether e passes p's filters as EventList's WHERE does,
// with the store's precision (times in microseconds): the id range
// (AfterID, UpToID), job, schedule, tenant, types, actor and time range.
func (p *EventListParams) Matches(e *Event) bool {
	switch {
	case e.ID <= p.AfterID, p.UpToID > 0 && e.ID > p.UpToID,
		p.JobID != "" && e.JobID != p.JobID,
		p.ScheduleID != "" && e.ScheduleID != p.ScheduleID,
		p.Tenant != "" && e.Tenant != p.Tenant,
		len(p.Types) > 0 && !slices.Contains(p.Types, e.Type),
		p.Actor != "" && !actorMatches(e.Actor, p.Actor),
		!p.Since.IsZero() && e.At.UnixMicro() < p.Since.UnixMicro(),
		!p.Until.IsZero() && e.At.UnixMicro() >= p.Until.UnixMicro():
		return false
	}
	return true
}

// actorMatches is EventList's actor filter: the actor itself, every key
// of a role ("admin" finds "admin key 1a2b... (name)"), or one key by its
// id (the SQL's LIKE patterns "<actor> key %" and "% key <actor>%"; as
// PostgreSQL's LIKE, case-sensitive; SQLite's LIKE ignores the case of
// ASCII letters, which no actor a live event has, "system" and
// "worker:<id>", tells apart unless a worker id holds " key ").
func actorMatches(actor, want string) bool {
	return actor == want || strings.HasPrefix(actor, want+" key ") || strings.Contains(actor, " key "+want)
}

// MergeEvents merges two answers to p (each in p's order, as EventList
// returns them), keeping one copy of an event found in both (b's), cut to
// p's limit.
func MergeEvents(p EventListParams, a, b []Event) []Event {
	return p.Page(UnionKeepingLater(a, b, func(e *Event) int64 { return e.ID }))
}

// Page sorts events in p's order (by id, newest first if p.Newest) and
// cuts them to p's limit, as EventList answers.
func (p *EventListParams) Page(events []Event) []Event {
	slices.SortFunc(events, func(x, y Event) int {
		if p.Newest {
			return cmp.Compare(y.ID, x.ID)
		}
		return cmp.Compare(x.ID, y.ID)
	})
	if limit := ClampLimit(p.Limit, DefaultListLimit, MaxListLimit); len(events) > limit {
		events = events[:limit]
	}
	return events
}

// UnionKeepingLater is later and the items of earlier whose key later
// does not hold: of an item read twice, the later read's copy. The
// order is later's, then earlier's; callers sort.
func UnionKeepingLater[T any, K comparable](earlier, later []T, key func(*T) K) []T {
	inLater := make(map[K]bool, len(later))
	for i := range later {
		inLater[key(&later[i])] = true
	}
	out := slices.Clone(later)
	for i := range earlier {
		if !inLater[key(&earlier[i])] {
			out = append(out, earlier[i])
		}
	}
	return out
}
