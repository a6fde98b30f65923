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

// Issue 28 item 22: the actor of an action is the key that did it, by id
// and name: two admin keys are two actors, and GET /events?actor= finds
// a key's actions by its id and a role's by the role.
func TestTheActorIsTheKey(t *testing.T) {
	h := newHarness(t, keyedConfig())
	h.key = "admin-key-0123456789"
	var alice, bob api.KeyCreated
	h.do("POST", "/keys", api.KeyRequest{Name: "alice", Role: "admin"}, &alice)
	h.do("POST", "/keys", api.KeyRequest{Name: "bob", Role: "admin"}, &bob)
	var ci api.KeyCreated
	h.do("POST", "/keys", api.KeyRequest{Name: "acme-ci", Role: "tenant", Tenant: "acme"}, &ci)
	h.key = ci.Secret
	a := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	b := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	h.key = alice.Secret
	h.do("POST", "/jobs/"+a.ID+"/cancel", nil, nil)
	h.key = bob.Secret
	h.do("POST", "/jobs/"+b.ID+"/cancel", nil, nil)

	h.key = "admin-key-0123456789"
	actor := func(jobID, typ string) string {
		t.Helper()
		var out api.EventList
		h.do("GET", "/events?job_id="+jobID+"&type="+typ, nil, &out)
		if len(out.Events) != 1 {
			t.Fatalf("%s events of %s: %+v", typ, jobID, out.Events)
		}
		return out.Events[0].Actor
	}
	if got, want := actor(a.ID, "submitted"), "tenant:acme key "+ci.Key.ID+" (acme-ci)"; got != want {
		t.Errorf("submitted by %q, want %q", got, want)
	}
	if got, want := actor(a.ID, "cancelled"), "admin key "+alice.Key.ID+" (alice)"; got != want {
		t.Errorf("a cancelled by %q, want %q", got, want)
	}
	if got, want := actor(b.ID, "cancelled"), "admin key "+bob.Key.ID+" (bob)"; got != want {
		t.Errorf("b cancelled by %q, want %q", got, want)
	}
	var byBob, byAdmins api.EventList
	h.do("GET", "/events?type=cancelled&actor="+bob.Key.ID, nil, &byBob)
	if len(byBob.Events) != 1 || byBob.Events[0].JobID != b.ID {
		t.Errorf("actor=%s (bob's id): %+v", bob.Key.ID, byBob.Events)
	}
	h.do("GET", "/events?type=cancelled&actor=admin", nil, &byAdmins)
	if len(byAdmins.Events) != 2 {
		t.Errorf("actor=admin: %d events, want both admins' cancels", len(byAdmins.Events))
	}
}
