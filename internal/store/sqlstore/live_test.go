package sqlstore

import (
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// A lease writes its leased event id to the live column and NULL to the
// indexed one (unchanged: HOT on PostgreSQL); the finish moves the live id
// to the indexed column in its own UPDATE, or writes the id it sets there
// (store doc.go, "The hot row and its indexes").
func TestLiveEventIDColumns(t *testing.T) {
	ev, none := int64(7), int64(0)
	running, succeeded := store.StateRunning, store.StateSucceeded
	for _, c := range []struct {
		name string
		set  store.JobSet
		sql  []string
		args []any // the id columns' values, in order
	}{
		{"lease", store.JobSet{State: &running, LeaseEventID: &ev},
			[]string{"lease_event_id = ?", "live_lease_event_id = ?"}, []any{nil, ev}},
		{"finish", store.JobSet{State: &succeeded},
			[]string{"lease_event_id = COALESCE(live_lease_event_id, lease_event_id)", "live_lease_event_id = ?",
				"start_event_id = COALESCE(live_start_event_id, start_event_id)", "live_start_event_id = ?"},
			[]any{nil, nil}},
		{"finish with the id", store.JobSet{State: &succeeded, LeaseEventID: &ev},
			[]string{"lease_event_id = ?", "live_lease_event_id = ?", "start_event_id = COALESCE"}, []any{ev, nil, nil}},
		{"clear", store.JobSet{State: &running, LeaseEventID: &none},
			[]string{"lease_event_id = ?", "live_lease_event_id = ?"}, []any{nil, nil}},
	} {
		sh, args := transitionArgs(&store.JobTransitionParams{ID: "j", At: time.Unix(1, 0), ExpectAttempt: store.AnyAttempt, Set: c.set}, new(store.JobSet), nil)
		q := sh.sql("state")
		for _, want := range c.sql {
			if !strings.Contains(q, want) {
				t.Errorf("%s: %s\nhas no %q", c.name, q, want)
			}
		}
		// updated_at, state, final_state, then the id columns.
		ids := args[3 : len(args)-1]
		if len(ids) != len(c.args) {
			t.Errorf("%s: id arguments %v, want %v", c.name, ids, c.args)
			continue
		}
		for i := range ids {
			if ids[i] != c.args[i] {
				t.Errorf("%s: id arguments %v, want %v", c.name, ids, c.args)
			}
		}
		if strings.Contains(q, "live_lease_event_id = COALESCE") {
			t.Errorf("%s: %s", c.name, q)
		}
	}
}
