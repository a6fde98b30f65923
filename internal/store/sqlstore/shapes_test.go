package sqlstore

import (
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
	sh, vals := jobTable.shape(args)
	cols, n := jobTable.columns(sh)
	want := "id, tenant, type, payload, state, max_attempts, created_at, updated_at, enqueued_at, priority"
	if n != len(vals) || n != 10 {
		t.Errorf("%d columns, %d values: %s; want 10: %s", n, len(vals), cols, want)
	}
	for _, c := range []string{"id", "tenant", "type", "priority", "state", "created_at", "payload", "max_attempts"} {
		if sh&(1<<indexOf(jobInsertColumns, c)) == 0 {
			t.Errorf("column %s is not written: %s", c, cols)
		}
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

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
