package server

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// GET /events: the audit trail, every event for an admin and a tenant's own
// for a tenant key, filtered by type, job, actor and time, paged.
func TestTheAuditTrail(t *testing.T) {
	cfg := keyedConfig()
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	a := h.submit(api.JobSpec{Type: "a"})
	h.key = "globex-key-0123456789"
	g := h.submit(api.JobSpec{Type: "a"})
	h.clock.Advance(time.Minute)
	h.key = "admin-key-0123456789"
	if code := h.do("POST", "/jobs/"+a.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	if code := h.do("POST", "/lanes/default/pause", api.PauseLaneRequest{Note: "audit"}, nil); code != http.StatusOK {
		t.Fatalf("pause: HTTP %d", code)
	}

	events := func(query string) []api.Event {
		t.Helper()
		var out api.EventList
		if code := h.do("GET", "/events?"+query, nil, &out); code != http.StatusOK {
			t.Fatalf("GET /events?%s: HTTP %d", query, code)
		}
		return out.Events
	}
	types := func(es []api.Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Type+":"+e.Tenant)
		}
		return out
	}
	all := events("type=submitted,cancelled,lane_paused")
	if want := []string{"submitted:acme", "submitted:globex", "cancelled:acme", "lane_paused:"}; !slices.Equal(types(all), want) {
		t.Fatalf("admin's trail %v, want %v", types(all), want)
	}
	if got := events("actor=admin"); !slices.Equal(types(got), []string{"cancelled:acme", "lane_paused:"}) {
		t.Errorf("actor=admin: %v", types(got))
	}
	if got := events("type=submitted&tenant=globex"); len(got) != 1 || got[0].JobID != g.ID {
		t.Errorf("type=submitted&tenant=globex: %v", types(got))
	}
	if got := events("job_id=" + a.ID); !slices.Equal(types(got), []string{"submitted:acme", "cancelled:acme"}) {
		t.Errorf("job_id: %v", types(got))
	}
	since := url.QueryEscape(h.clock.Now().Add(-time.Second).Format(time.RFC3339Nano))
	if got := events("type=cancelled,lane_paused,submitted&since=" + since); !slices.Equal(types(got), []string{"cancelled:acme", "lane_paused:"}) {
		t.Errorf("since: %v", types(got))
	}
	if got := events("type=submitted&until=" + since); len(got) != 2 {
		t.Errorf("until: %v", types(got))
	}
	if got := events("type=config_loaded&actor=system"); len(got) != 1 || got[0].Tenant != "" {
		t.Errorf("config_loaded at start: %v", types(got))
	}
	var page api.EventList
	h.do("GET", "/events?limit=3&type=submitted,cancelled,lane_paused", nil, &page)
	if len(page.Events) != 3 || page.NextAfterID != all[2].ID {
		t.Fatalf("first page: %d events, next %d", len(page.Events), page.NextAfterID)
	}
	if rest := events("type=submitted,cancelled,lane_paused&after_id=" + itoa(page.NextAfterID)); len(rest) != 1 || rest[0].ID != all[3].ID {
		t.Errorf("second page: %v", types(rest))
	}

	h.key = "acme-key-0123456789"
	if got := events(""); !slices.Equal(types(got), []string{"submitted:acme", "cancelled:acme"}) {
		t.Errorf("acme's trail: %v, want its own events only", types(got))
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/events?tenant=globex", nil, &e); code != http.StatusForbidden {
		t.Errorf("acme reading globex's events: HTTP %d, want 403", code)
	}
	h.key = "worker-key-0123456789"
	if code := h.do("GET", "/events", nil, &e); code != http.StatusForbidden {
		t.Errorf("a worker key: HTTP %d, want 403", code)
	}
	h.key = "admin-key-0123456789"
	for _, bad := range []string{"limit=0", "after_id=x", "since=yesterday", "since=" + since + "&until=" + since, "colour=red"} {
		if code := h.do("GET", "/events?"+bad, nil, &e); code != http.StatusBadRequest {
			t.Errorf("GET /events?%s: HTTP %d, want 400", bad, code)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
