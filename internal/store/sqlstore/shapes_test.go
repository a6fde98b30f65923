package sqlstore

import (
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// A job that sets few fields binds few parameters: its required columns
// and what it sets. A value that is not the column's default is bound,
// even when it is a zero: a nullable column's "" or 0 is not its NULL.
func TestInsertShapeBindsWhatIsSet(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	j := store.Job{ID: "j1", Tenant: "t", Type: "x", State: store.StatePending, Payload: []byte(`{}`),
		CreatedAt: now, UpdatedAt: now, EnqueuedAt: now, MaxAttempts: 3}
	args, err := jobArgs(&j)
	if err != nil {
		t.Fatal(err)
	}
	hot, spec := splitJobArgs(args)
	sh, vals := jobTable.shape(hot)
	cols, n := jobTable.columns(sh)
	want := "id, tenant, type, priority, state, max_attempts, created_at, updated_at, enqueued_at"
	if n != len(vals) || cols != want {
		t.Errorf("%d columns, %d values: %s; want %s", n, len(vals), cols, want)
	}
	sh, vals = specTable.shape(spec)
	if cols, n := specTable.columns(sh); n != len(vals) || cols != "job_id, payload" || vals[0] != "j1" {
		t.Errorf("spec: %d columns, %d values: %s; want job_id, payload", n, len(vals), cols)
	}
	if !isDefault(nil, colNull) || isDefault("", colNull) || isDefault(int64(0), colNull) {
		t.Error("a nullable column's default is NULL only")
	}
	if !isDefault(false, colZero) || !isDefault(int64(0), colZero) || !isDefault("", colZero) || isDefault(nil, colZero) {
		t.Error("a zero column's default is 0, FALSE or '', never NULL")
	}
	if isDefault(int64(0), colRequired) || isDefault(nil, colRequired) {
		t.Error("a required column is always written")
	}
}

// Every column of a job is in one of its two tables, once.
func TestJobColumnsSplit(t *testing.T) {
	seen := map[string]int{}
	for _, c := range append(append([]string(nil), jobTable.cols...), specTable.cols[1:]...) {
		seen[c]++
	}
	for _, c := range jobInsertColumns {
		if seen[c] != 1 {
			t.Errorf("column %s is written %d times", c, seen[c])
		}
	}
	if len(seen) != len(jobInsertColumns) {
		t.Errorf("%d columns written, jobArgs has %d", len(seen), len(jobInsertColumns))
	}
}

// One set of from states makes one shape, in any order and with repeats;
// states already sorted are used as they are, with no copy.
func TestFromStatesSortedOnce(t *testing.T) {
	r, l, p := store.StateRunning, store.StateLeased, store.StatePending
	for _, c := range []struct{ in, want []store.State }{
		{nil, nil}, {[]store.State{r}, []store.State{r}}, {[]store.State{l, r}, []store.State{l, r}},
		{[]store.State{r, l}, []store.State{l, r}}, {[]store.State{r, r}, []store.State{r}},
		{[]store.State{r, p, l, p}, []store.State{l, p, r}},
	} {
		in := slices.Clone(c.in)
		if got := fromStates(in); !slices.Equal(got, c.want) || !slices.Equal(in, c.in) {
			t.Errorf("fromStates(%v) = %v (input now %v), want %v", c.in, got, in, c.want)
		}
	}
	sorted := []store.State{l, p, r}
	if n := testing.AllocsPerRun(100, func() { _ = fromStates(sorted) }); n != 0 {
		t.Errorf("sorted states: %.0f allocations, want 0", n)
	}
}
