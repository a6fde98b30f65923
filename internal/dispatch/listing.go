package dispatch

import (
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/fairwayhq/fairway/internal/store"
)

// Listings of unfinished jobs. The store keeps no index on a job's state
// (store doc.go, "The hot row and its indexes"): the dispatcher, which
// holds every unfinished job, answers listings of unfinished states from
// its index instead, with JobList's filters, order and cursor.

// stateSets holds the dispatcher's unfinished jobs by state. Every change
// of a job's state goes through transition (moved), and a job enters and
// leaves the index with add and remove; a terminal state is never kept.
type stateSets map[store.State]map[string]*jobRec

func (s stateSets) add(rec *jobRec) {
	st := rec.job.State
	if st.Terminal() {
		return
	}
	set := s[st]
	if set == nil {
		set = map[string]*jobRec{}
		s[st] = set
	}
	set[rec.job.ID] = rec
}

func (s stateSets) remove(rec *jobRec) { delete(s[rec.job.State], rec.job.ID) }

// moved files rec under its state, which was from.
func (s stateSets) moved(rec *jobRec, from store.State) {
	if rec.job.State == from {
		return
	}
	delete(s[from], rec.job.ID)
	s.add(rec)
}

// ListUnfinished returns the jobs in p.States (unfinished states only)
// that pass p's filters and come after p.Cursor, newest first: at most
// max, each as a read of the store would return it. The listing is made
// on the dispatcher's goroutine and returned once the batch it ran in is
// durable.
func (d *Dispatcher) ListUnfinished(ctx context.Context, p store.JobListParams, max int) ([]store.Job, error) {
	var after *store.JobCursor
	if p.Cursor != "" {
		c, err := store.DecodeJobCursor(p.Cursor)
		if err != nil {
			return nil, err
		}
		after = &c
	}
	for _, st := range p.States {
		if st.Terminal() {
			return nil, fmt.Errorf("dispatch: list unfinished: %s is a terminal state", st)
		}
	}
	var out []store.Job
	err := d.submit(ctx, func(tx *txn) { out = d.listUnfinished(&p, after, max) })
	return out, err
}

// CountUnfinished counts the jobs in p.States (unfinished states only)
// that pass p's filters.
func (d *Dispatcher) CountUnfinished(ctx context.Context, p store.JobListParams) (int64, error) {
	var n int64
	err := d.submit(ctx, func(tx *txn) {
		for _, st := range slices.Compact(slices.Sorted(slices.Values(p.States))) {
			for _, rec := range d.byState[st] {
				if p.Matches(&rec.job) {
					n++
				}
			}
		}
	})
	return n, err
}

// listUnfinished keeps the max newest matching jobs in a heap whose root
// is the oldest kept: one pass over the listed states' sets.
func (d *Dispatcher) listUnfinished(p *store.JobListParams, after *store.JobCursor, max int) []store.Job {
	if max <= 0 {
		return nil
	}
	kept := &newestKept{}
	for _, st := range slices.Compact(slices.Sorted(slices.Values(p.States))) {
		for _, rec := range d.byState[st] {
			j := &rec.job
			if after != nil && !after.Before(j) || !p.Matches(j) {
				continue
			}
			if kept.Len() < max {
				heap.Push(kept, j)
			} else if store.NewestFirst(j, (*kept)[0]) < 0 {
				(*kept)[0] = j
				heap.Fix(kept, 0)
			}
		}
	}
	slices.SortFunc(*kept, store.NewestFirst)
	out := make([]store.Job, len(*kept))
	for i, j := range *kept {
		out[i] = j.AsStored()
	}
	return out
}

// newestKept is a heap of jobs, the oldest (last in list order) at the
// root.
type newestKept []*store.Job

func (h newestKept) Len() int           { return len(h) }
func (h newestKept) Less(a, b int) bool { return store.NewestFirst(h[a], h[b]) > 0 }
func (h newestKept) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *newestKept) Push(x any)        { *h = append(*h, x.(*store.Job)) }
func (h *newestKept) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
