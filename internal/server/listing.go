package server

import (
	"context"
	"slices"

	"github.com/fairwayhq/fairway/internal/store"
)

// Job listings. The store keeps no index on an unfinished job's state
// (store doc.go, "The hot row and its indexes"): the leader lists
// unfinished states from its dispatcher's memory and finished ones from
// the store, and merges the two; a read-only server (a standby with no
// leader to forward to) lists everything from the store, which is
// correct but walks every unfinished job newer than the page.

// listJobs is JobList, with unfinished states answered by the dispatcher.
func (s *Server) listJobs(ctx context.Context, p store.JobListParams) (store.JobPage, error) {
	unfinished, terminal := store.SplitStates(p.States)
	if s.readOnly || s.d == nil || len(unfinished) == 0 {
		return s.st.JobList(ctx, p)
	}
	limit := store.ClampLimit(p.Limit, store.DefaultListLimit, store.MaxListLimit)
	mem := p
	mem.States = unfinished
	// The memory first, the store after: a job that finishes between the
	// two reads is in the store's answer, and the merge keeps that copy.
	jobs, err := s.d.ListUnfinished(ctx, mem, limit+1)
	if err != nil {
		return store.JobPage{}, err
	}
	storeMore := false
	if len(terminal) > 0 {
		fin := p
		fin.States, fin.Limit = terminal, limit
		page, err := s.st.JobList(ctx, fin)
		if err != nil {
			return store.JobPage{}, err
		}
		jobs = mergeJobs(jobs, page.Jobs)
		storeMore = page.NextCursor != ""
	}
	out := store.JobPage{Jobs: jobs}
	if len(jobs) > limit || storeMore && len(jobs) == limit {
		out.Jobs = jobs[:limit]
		last := out.Jobs[limit-1]
		out.NextCursor = store.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}.Encode()
	}
	return out, nil
}

// mergeJobs merges two lists in JobList's order; a job in both keeps the
// store's copy (the later read).
func mergeJobs(mem, stored []store.Job) []store.Job {
	out := store.UnionKeepingLater(mem, stored, func(j *store.Job) string { return j.ID })
	slices.SortFunc(out, func(a, b store.Job) int { return store.NewestFirst(&a, &b) })
	return out
}

// countJobs is JobCount, with unfinished states counted by the dispatcher.
func (s *Server) countJobs(ctx context.Context, p store.JobListParams) (int64, error) {
	unfinished, terminal := store.SplitStates(p.States)
	if s.readOnly || s.d == nil || len(unfinished) == 0 {
		return s.st.JobCount(ctx, p)
	}
	mem := p
	mem.States = unfinished
	n, err := s.d.CountUnfinished(ctx, mem)
	if err != nil || len(terminal) == 0 {
		return n, err
	}
	fin := p
	fin.States = terminal
	m, err := s.st.JobCount(ctx, fin)
	return n + m, err
}

// listEvents is EventList, with the leased and started events of running
// jobs' live attempts answered by the dispatcher: the store holds them in
// no index (store doc.go, "The hot row and its indexes", "The merged
// feed"). The memory first, with the last id drawn then; the store after,
// without the live events and up to that id, so that an event drawn
// between the two reads is in neither and comes with a later page; the
// merge keeps one copy of an event in both (its job finished between the
// reads).
func (s *Server) listEvents(ctx context.Context, p store.EventListParams) ([]store.Event, error) {
	if s.readOnly || s.d == nil || p.JobID != "" || p.ScheduleID != "" || !wantsLiveEvents(p.Types) {
		return s.st.EventList(ctx, p)
	}
	live, upTo, err := s.d.LiveEvents(ctx, p)
	if err != nil {
		return nil, err
	}
	if upTo == 0 {
		return s.st.EventList(ctx, p) // no id drawn yet: no live event
	}
	if hook := s.betweenEventReads.Load(); hook != nil {
		(*hook)()
	}
	stored := p
	stored.NoLive = true
	if stored.UpToID == 0 || upTo < stored.UpToID {
		stored.UpToID = upTo
	}
	evs, err := s.st.EventList(ctx, stored)
	if err != nil {
		return nil, err
	}
	return store.MergeEvents(p, live, evs), nil
}

// wantsLiveEvents reports whether a list of these types may hold a live
// attempt's events (leased, started).
func wantsLiveEvents(types []store.EventType) bool {
	return len(types) == 0 || slices.Contains(types, store.EventLeased) || slices.Contains(types, store.EventStarted)
}
