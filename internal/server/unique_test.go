package server

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

func uniqueSpec(key string, states ...string) api.JobSpec {
	return api.JobSpec{Type: "reindex", Key: key, Command: []string{"true"},
		Unique: &api.UniqueRule{By: []string{"type", "key"}, States: states}}
}

func TestUniqueReturnsTheJobThatHoldsTheRule(t *testing.T) {
	h := newHarness(t, defaultConfig())
	var first, second, other api.SubmitResponse
	if code := h.do("POST", "/jobs", uniqueSpec("repo-1", "pending", "running"), &first); code != http.StatusCreated {
		t.Fatalf("first: HTTP %d", code)
	}
	if code := h.do("POST", "/jobs", uniqueSpec("repo-1", "running", "pending"), &second); code != http.StatusOK {
		t.Fatalf("second: HTTP %d", code)
	}
	want := &api.UniqueMatch{By: []string{"key", "type"}, States: []string{"pending", "running"}, JobID: first.Job.ID}
	if !second.Deduplicated || second.Job.ID != first.Job.ID || !cmp.Equal(want, second.UniqueMatch) {
		t.Fatalf("second = %s dedup=%v match=%+v, want %s dedup with %+v", second.Job.ID, second.Deduplicated, second.UniqueMatch, first.Job.ID, want)
	}
	if code := h.do("POST", "/jobs", uniqueSpec("repo-2"), &other); code != http.StatusCreated {
		t.Fatalf("other key: HTTP %d", code)
	}
	// The job page shows the rule, its default states filled in.
	if got := h.get(other.Job.ID).Unique; !cmp.Equal(got, &api.UniqueRule{By: []string{"key", "type"},
		States: []string{"blocked", "pending", "leased", "running", "retry_wait"}}) {
		t.Fatalf("job's rule = %+v", got)
	}
	if !slices.Contains(h.events(first.Job.ID), string(store.EventDeduplicated)) {
		t.Fatalf("no deduplicated event: %v", h.events(first.Job.ID))
	}
	// Once the first job has finished it binds no longer.
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	for _, l := range h.lease(w, 2) {
		h.complete(w, api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: api.OutcomeSucceeded, ExitCode: intp(0)})
	}
	var third api.SubmitResponse
	if code := h.do("POST", "/jobs", uniqueSpec("repo-1", "pending", "running"), &third); code != http.StatusCreated || third.Deduplicated || third.Job.ID == first.Job.ID {
		t.Fatalf("after the first finished: HTTP %d %+v", code, third)
	}
}

func TestUniqueInOneBatch(t *testing.T) {
	h := newHarness(t, defaultConfig())
	var out api.BatchResponse
	req := api.BatchRequest{Jobs: []api.JobSpec{uniqueSpec("a"), uniqueSpec("a"), uniqueSpec("b")}}
	if code := h.do("POST", "/jobs/batch", req, &out); code != http.StatusCreated {
		t.Fatalf("batch: HTTP %d", code)
	}
	r := out.Jobs
	if len(r) != 3 || r[0].Deduplicated || !r[1].Deduplicated || r[2].Deduplicated ||
		r[1].Job.ID != r[0].Job.ID || r[1].UniqueMatch == nil || r[1].UniqueMatch.JobID != r[0].Job.ID || r[2].Job.ID == r[0].Job.ID {
		t.Fatalf("batch answers: %+v", r)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 2 {
		t.Fatalf("%d jobs stored, want 2", len(list.Jobs))
	}
}

func TestUniqueConcurrentSubmitsMakeOneJob(t *testing.T) {
	h := newHarness(t, defaultConfig())
	const n = 50
	ids := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r api.SubmitResponse
			codes[i] = h.do("POST", "/jobs", uniqueSpec("hot"), &r)
			ids[i] = r.Job.ID
		}()
	}
	wg.Wait()
	created := 0
	for i := range n {
		if codes[i] == http.StatusCreated {
			created++
		}
		if ids[i] != ids[0] || (codes[i] != http.StatusCreated && codes[i] != http.StatusOK) {
			t.Fatalf("submit %d: HTTP %d job %s, want job %s", i, codes[i], ids[i], ids[0])
		}
	}
	if created != 1 {
		t.Fatalf("%d submits created a job, want 1", created)
	}
}

func TestUniqueBadRules(t *testing.T) {
	h := newHarness(t, defaultConfig())
	for name, c := range map[string]struct {
		rule  *api.UniqueRule
		field string
	}{
		"no field":       {&api.UniqueRule{}, "unique.by"},
		"unknown field":  {&api.UniqueRule{By: []string{"type", "colour"}}, "unique.by[1]"},
		"unknown state":  {&api.UniqueRule{By: []string{"type"}, States: []string{"sleeping"}}, "unique.states[0]"},
		"period zero":    {&api.UniqueRule{By: []string{"type"}, PeriodMS: store.Ptr(int64(0))}, "unique.period_ms"},
		"period < 0":     {&api.UniqueRule{By: []string{"type"}, PeriodMS: store.Ptr(int64(-1))}, "unique.period_ms"},
		"period 2 years": {&api.UniqueRule{By: []string{"type"}, PeriodMS: store.Ptr(int64(2 * 365 * 24 * 3600 * 1000))}, "unique.period_ms"},
	} {
		t.Run(name, func(t *testing.T) {
			var e api.ErrorResponse
			code := h.do("POST", "/jobs", api.JobSpec{Type: "reindex", Command: []string{"true"}, Unique: c.rule}, &e)
			if code != http.StatusBadRequest || e.Error.Code != api.CodeInvalidArgument || e.Error.Field != c.field || e.Error.Message == "" {
				t.Fatalf("HTTP %d %+v, want 400 %s field %s", code, e.Error, api.CodeInvalidArgument, c.field)
			}
		})
	}
	var e api.ErrorResponse
	batch := api.BatchRequest{Jobs: []api.JobSpec{uniqueSpec("a"), {Type: "reindex", Unique: &api.UniqueRule{By: []string{"colour"}}}}}
	if code := h.do("POST", "/jobs/batch", batch, &e); code != http.StatusBadRequest || e.Error.Field != "jobs[1].unique.by[0]" {
		t.Fatalf("batch: HTTP %d %+v", code, e.Error)
	}
}
