package storetest

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// newestFirst sorts jobs the way JobList returns them.
func newestFirst(jobs []store.Job) []string {
	js := slices.Clone(jobs)
	sort.Slice(js, func(a, b int) bool {
		if !js[a].CreatedAt.Equal(js[b].CreatedAt) {
			return js[a].CreatedAt.After(js[b].CreatedAt)
		}
		return js[a].ID > js[b].ID
	})
	return ids(js)
}

// listAll pages through JobList and returns every id in page order.
func listAll(t *testing.T, s store.Store, p store.JobListParams) []string {
	t.Helper()
	var out []string
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("pagination does not end")
		}
		page, err := s.JobList(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) > p.Limit && p.Limit > 0 {
			t.Fatalf("page of %d jobs, limit %d", len(page.Jobs), p.Limit)
		}
		out = append(out, ids(page.Jobs)...)
		if page.NextCursor == "" {
			return out
		}
		if len(page.Jobs) == 0 {
			t.Fatal("empty page with a next cursor")
		}
		p.Cursor = page.NextCursor
	}
}

func testListFilters(t *testing.T, s store.Store) {
	var jobs []store.Job
	tenants := []string{"acme", "globex"}
	states := []store.State{store.StatePending, store.StateRunning, store.StateSucceeded}
	types := []string{"report", "encode"}
	lanes := []string{"batch", "adhoc"}
	for i := range 24 {
		j := newJob(jobID("f", i), tenants[i%2], T0.Add(time.Duration(i)*time.Minute))
		j.State, j.Type, j.Lane = states[i%3], types[(i/2)%2], lanes[(i/4)%2]
		if i%5 == 0 {
			j.ScheduleID = "sched"
		}
		if i%4 == 1 {
			j.Tags = []string{"nightly", fmt.Sprintf("n%d", i)}
		}
		if i%6 == 4 { // the store does not check that a failure class goes with a failed state
			j.FailureClass = store.FailTimeout
		}
		jobs = append(jobs, j)
	}
	insert(t, s, jobs...)

	match := func(f func(j store.Job) bool) []string {
		var out []store.Job
		for _, j := range jobs {
			if f(j) {
				out = append(out, j)
			}
		}
		return newestFirst(out)
	}
	cases := map[string]struct {
		p    store.JobListParams
		want []string
	}{
		"all":    {store.JobListParams{}, match(func(store.Job) bool { return true })},
		"tenant": {store.JobListParams{Tenant: "acme"}, match(func(j store.Job) bool { return j.Tenant == "acme" })},
		"states": {store.JobListParams{States: []store.State{store.StatePending, store.StateSucceeded}},
			match(func(j store.Job) bool { return j.State != store.StateRunning })},
		"tenant+state": {store.JobListParams{Tenant: "globex", States: []store.State{store.StateRunning}},
			match(func(j store.Job) bool { return j.Tenant == "globex" && j.State == store.StateRunning })},
		"type": {store.JobListParams{Type: "encode"}, match(func(j store.Job) bool { return j.Type == "encode" })},
		"types": {store.JobListParams{Types: []string{"encode", "nope"}, Lanes: []string{"adhoc", "batch"}},
			match(func(j store.Job) bool { return j.Type == "encode" && (j.Lane == "adhoc" || j.Lane == "batch") })},
		"lane": {store.JobListParams{Lane: "adhoc"}, match(func(j store.Job) bool { return j.Lane == "adhoc" })},
		"type+lane+tenant": {store.JobListParams{Type: "report", Lane: "batch", Tenant: "acme"},
			match(func(j store.Job) bool { return j.Type == "report" && j.Lane == "batch" && j.Tenant == "acme" })},
		"failure class": {store.JobListParams{FailureClass: store.FailTimeout, States: []store.State{store.StateRunning}},
			match(func(j store.Job) bool { return j.FailureClass == store.FailTimeout && j.State == store.StateRunning })},
		"schedule": {store.JobListParams{ScheduleID: "sched"}, match(func(j store.Job) bool { return j.ScheduleID == "sched" })},
		"tag":      {store.JobListParams{Tag: "nightly"}, match(func(j store.Job) bool { return slices.Contains(j.Tags, "nightly") })},
		"tag+type": {store.JobListParams{Tag: "nightly", Type: "report"}, match(func(j store.Job) bool {
			return slices.Contains(j.Tags, "nightly") && j.Type == "report"
		})},
		"created range": {store.JobListParams{CreatedAfter: T0.Add(5 * time.Minute), CreatedBefore: T0.Add(10 * time.Minute)},
			match(func(j store.Job) bool {
				return j.CreatedAt.After(T0.Add(5*time.Minute)) && j.CreatedAt.Before(T0.Add(10*time.Minute))
			})},
		"nothing": {store.JobListParams{Tenant: "initech"}, nil},
	}
	for name, c := range cases {
		page, err := s.JobList(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diff(t, name, c.want, ids(page.Jobs))
		if page.NextCursor != "" {
			t.Errorf("%s: NextCursor %q on the only page", name, page.NextCursor)
		}
		c.p.Limit = 3
		diff(t, name+" paged", c.want, listAll(t, s, c.p))
		n, err := s.JobCount(ctx, c.p)
		if err != nil {
			t.Fatalf("%s: count: %v", name, err)
		}
		if n != int64(len(c.want)) {
			t.Errorf("%s: JobCount %d, want %d", name, n, len(c.want))
		}
	}
}

func testListPagination(t *testing.T, s store.Store) {
	var jobs []store.Job
	for i := range 237 {
		jobs = append(jobs, newJob(store.NewID(T0), "t", T0.Add(time.Duration(i)*time.Second)))
	}
	insert(t, s, jobs...)
	want := newestFirst(jobs)
	for _, limit := range []int{1, 25, 237, 1000} {
		diff(t, "pages", want, listAll(t, s, store.JobListParams{Limit: limit}))
	}
}

// testListPaginationTies: many jobs share one created_at; the id breaks the
// tie, so pages neither repeat nor skip.
func testListPaginationTies(t *testing.T, s store.Store) {
	var jobs []store.Job
	for i := range 90 {
		jobs = append(jobs, newJob(jobID("tie", i), "t", T0.Add(time.Duration(i/30)*time.Microsecond)))
	}
	insert(t, s, jobs...)
	diff(t, "pages", newestFirst(jobs), listAll(t, s, store.JobListParams{Limit: 7}))
}

// testListPaginationConcurrent pages while other jobs are inserted, newer and
// older than the ones present: every job present at the start is listed
// exactly once, and no job twice.
func testListPaginationConcurrent(t *testing.T, s store.Store) {
	var jobs []store.Job
	for i := range 200 {
		jobs = append(jobs, newJob(jobID("orig", i), "t", T0.Add(time.Duration(i)*time.Second)))
	}
	insert(t, s, jobs...)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			created := T0.Add(time.Hour + time.Duration(i)*time.Second)
			if i%3 == 0 {
				created = T0.Add(-time.Hour - time.Duration(i)*time.Second)
			}
			j := newJob(jobID("new", i), "t", created)
			if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, j) }); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	got := listAll(t, s, store.JobListParams{Limit: 9})
	close(stop)
	wg.Wait()

	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
		if seen[id] > 1 {
			t.Errorf("job %s listed twice", id)
		}
	}
	for _, j := range jobs {
		if seen[j.ID] != 1 {
			t.Errorf("job %s listed %d times, want once", j.ID, seen[j.ID])
		}
	}
	// The listed ids are in order, whatever was inserted meanwhile.
	all, err := s.JobGetMany(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "order", newestFirst(all), got)
}

func testListBadCursor(t *testing.T, s store.Store) {
	for _, c := range []string{"garbage!", "Zm9v", store.JobCursor{ID: "x"}.Encode()[:5]} {
		_, err := s.JobList(ctx, store.JobListParams{Cursor: c})
		wantErr(t, "cursor "+c, err, store.ErrInvalidCursor)
	}
}

func testListLimitClamp(t *testing.T, s store.Store) {
	var jobs []store.Job
	for i := range store.DefaultListLimit + 1 {
		jobs = append(jobs, newJob(jobID("l", i), "t", T0))
	}
	insert(t, s, jobs...)
	page, err := s.JobList(ctx, store.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Jobs) != store.DefaultListLimit || page.NextCursor == "" {
		t.Fatalf("default page: %d jobs, cursor %q", len(page.Jobs), page.NextCursor)
	}
	page, err = s.JobList(ctx, store.JobListParams{Limit: store.MaxListLimit * 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Jobs) != store.DefaultListLimit+1 || page.NextCursor != "" {
		t.Fatalf("large page: %d jobs, cursor %q", len(page.Jobs), page.NextCursor)
	}
}
