package store

import (
	"cmp"
	"slices"
	"time"
)

// Listing jobs outside the store. The dispatcher lists the unfinished jobs
// it holds (doc.go, "The hot row and its indexes"); these helpers give such
// a listing JobList's filters, order and cursor, and its rows as a read of
// the store would return them.

// Matches reports whether j passes p's filters other than States and
// Cursor, with the store's precision (times in microseconds).
func (p *JobListParams) Matches(j *Job) bool {
	switch {
	case p.Tenant != "" && j.Tenant != p.Tenant,
		!anyOf(p.Types, p.Type, j.Type),
		!anyOf(p.Lanes, p.Lane, j.Lane),
		p.ScheduleID != "" && j.ScheduleID != p.ScheduleID,
		p.Tag != "" && !slices.Contains(j.Tags, p.Tag),
		p.FailureClass != "" && j.FailureClass != p.FailureClass,
		!p.CreatedAfter.IsZero() && j.CreatedAt.UnixMicro() <= p.CreatedAfter.UnixMicro(),
		!p.CreatedBefore.IsZero() && j.CreatedAt.UnixMicro() >= p.CreatedBefore.UnixMicro():
		return false
	}
	return true
}

// anyOf reports whether v is one of vals or one; true when both are empty.
func anyOf(vals []string, one, v string) bool {
	if len(vals) == 0 && one == "" {
		return true
	}
	return v == one && one != "" || slices.Contains(vals, v)
}

// Before reports whether j comes after the cursor c in JobList's order
// (newest first): its (created_at, id) is below c's.
func (c JobCursor) Before(j *Job) bool {
	us, cus := j.CreatedAt.UnixMicro(), c.CreatedAt.UnixMicro()
	return us < cus || us == cus && j.ID < c.ID
}

// NewestFirst orders jobs as JobList does: by created_at (microseconds),
// then id, both descending.
func NewestFirst(a, b *Job) int {
	if c := cmp.Compare(b.CreatedAt.UnixMicro(), a.CreatedAt.UnixMicro()); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// AsStored returns j as a read of its row returns it: times in UTC with
// microsecond precision, durations in whole milliseconds, empty lists,
// maps and byte strings as nil.
func (j Job) AsStored() Job {
	for _, t := range []*time.Time{&j.RunAt, &j.ScheduledFor, &j.CreatedAt, &j.UpdatedAt, &j.EnqueuedAt,
		&j.StartedAt, &j.FinishedAt, &j.LeaseExpiresAt, &j.LeasedAt, &j.StartEventAt} {
		if !t.IsZero() {
			*t = time.UnixMicro(t.UnixMicro()).UTC()
		}
	}
	for _, d := range []*time.Duration{&j.Timeout, &j.Expected, &j.Retry.Delay, &j.Retry.MaxDelay} {
		*d = d.Truncate(time.Millisecond)
	}
	j.Labels, j.Tags, j.Command = nilIfEmpty(j.Labels), nilIfEmpty(j.Tags), nilIfEmpty(j.Command)
	j.Retry.RetryOn, j.DependsOn = nilIfEmpty(j.Retry.RetryOn), nilIfEmpty(j.DependsOn)
	j.Payload, j.Result = nilIfEmpty(j.Payload), nilIfEmpty(j.Result)
	if len(j.Env) == 0 {
		j.Env = nil
	}
	return j
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// SplitStates divides states into the unfinished and the terminal ones,
// each sorted and without duplicates.
func SplitStates(states []State) (unfinished, terminal []State) {
	for _, s := range slices.Compact(slices.Sorted(slices.Values(states))) {
		if s.Terminal() {
			terminal = append(terminal, s)
		} else {
			unfinished = append(unfinished, s)
		}
	}
	return unfinished, terminal
}
