package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/wire"
)

// Listings of unfinished states come from the dispatcher's memory (store
// doc.go, "The hot row and its indexes"): page by page, with every filter
// and with finished states mixed in, they hold the same jobs, in the same
// order, with the same fields, as the store's own JobList, which still
// answers every state (by walking the unfinished jobs). Many jobs share
// a creation time (one batch, one clock reading), so ties go by id.
func TestUnfinishedListingsMatchTheStore(t *testing.T) {
	cfg := defaultConfig()
	cfg.Lanes = map[string]config.Lane{"default": {}, "bulk": {}}
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Types: []string{"a", "b"}, Slots: 6})
	var batch []api.JobSpec
	for i := range 40 {
		spec := api.JobSpec{Type: []string{"a", "b"}[i%2], Tenant: fmt.Sprintf("t%d", i%3), Lane: []string{"default", "bulk"}[i%2],
			Tags: []string{fmt.Sprintf("tag%d", i%4)}, Command: []string{"true"}, Env: map[string]string{"N": fmt.Sprint(i)},
			Payload: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`), TimeoutMS: 60000}
		if i%7 == 0 {
			at := h.clock.Now().Add(time.Hour)
			spec.RunAt = &at // blocked
		}
		batch = append(batch, spec)
	}
	var res api.BatchResponse
	if code := h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: batch[:20]}, &res); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("batch submit: HTTP %d", code)
	}
	h.clock.Advance(time.Millisecond)
	for _, spec := range batch[20:] {
		h.submit(spec)
		h.clock.Advance(1500 * time.Nanosecond) // below the store's precision: AsStored truncates
	}
	leases := h.lease(w, 6)
	for i, l := range leases {
		switch i % 3 {
		case 0:
			h.start(w, l.Job.ID, l.Attempt)
		case 1:
			h.complete(w, api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: api.OutcomeSucceeded})
		}
	}
	h.tick()

	filters := []string{
		"state=pending", "state=running", "state=leased", "state=blocked", "state=pending,running,leased,blocked",
		"state=pending&tenant=t1", "state=pending&type=b", "state=pending&lane=bulk", "state=pending&tag=tag2",
		"state=pending,succeeded", "state=running,succeeded", "state=pending,succeeded&tenant=t1", "state=blocked&created_after=" +
			url.QueryEscape(h.clock.Now().Add(-time.Microsecond*10).Format(time.RFC3339Nano)),
	}
	for _, f := range filters {
		for _, limit := range []int{3, 100} {
			got := h.listAll(f, limit)
			want := h.storeListAll(f, limit)
			if len(want) == 0 && f != "state=leased" {
				t.Errorf("%s: the store lists no job: the test lists nothing", f)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, limit %d: the server listed\n%v\nthe store\n%v", f, limit, ids(got), ids(want))
			}
		}
		var counted api.JobList
		if code := h.do("GET", "/jobs?"+f+"&count=true&limit=1", nil, &counted); code != http.StatusOK || counted.Total == nil {
			t.Fatalf("%s: count: HTTP %d, total %v", f, code, counted.Total)
		}
		if want := int64(len(h.storeListAll(f, 100))); *counted.Total != want {
			t.Errorf("%s: total %d, want %d", f, *counted.Total, want)
		}
	}
}

func ids(jobs []api.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID + ":" + j.State
	}
	return out
}

// listAll pages GET /jobs?query through to its end.
func (h *harness) listAll(query string, limit int) []api.Job {
	h.t.Helper()
	var out []api.Job
	cursor := ""
	for {
		var page api.JobList
		path := fmt.Sprintf("/jobs?%s&limit=%d", query, limit)
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if code := h.do("GET", path, nil, &page); code != http.StatusOK {
			h.t.Fatalf("GET %s: HTTP %d", path, code)
		}
		for _, j := range page.Jobs {
			j.Reason = "" // the engine's, not the store's
			out = append(out, j)
		}
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

// storeListAll is listAll from the store's JobList.
func (h *harness) storeListAll(query string, limit int) []api.Job {
	h.t.Helper()
	r, _ := http.NewRequest("GET", "/api/v1/jobs?"+query, nil)
	p, err := listParams(r, principal{role: roleAdmin})
	if err != nil {
		h.t.Fatal(err)
	}
	p.Limit = limit
	var out []api.Job
	for {
		page, err := h.srv.st.JobList(context.Background(), p)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, j := range page.Jobs {
			// Round trip through JSON, as the HTTP answer is.
			b, _ := json.Marshal(wire.Job(j))
			var aj api.Job
			_ = json.Unmarshal(b, &aj)
			out = append(out, aj)
		}
		if page.NextCursor == "" {
			return out
		}
		p.Cursor = page.NextCursor
	}
}
