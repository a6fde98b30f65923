package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func TestCLIEventsPagesAndFilters(t *testing.T) {
	at := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	pages := map[string]api.EventList{
		"": {Events: []api.Event{{ID: 1, JobID: "j1", Attempt: 1, Type: "retried", At: at, Actor: "admin", Tenant: "acme",
			Detail: json.RawMessage(`{"from":"failed"}`)}}, NextAfterID: 1},
		"1": {Events: []api.Event{{ID: 2, Type: "lane_paused", At: at, Actor: "admin"}}},
	}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/events": func(w http.ResponseWriter, r *http.Request) {
		jsonReply(w, 200, pages[r.URL.Query().Get("after_id")])
	}})
	code, out, errOut := runCLI(t, f.URL, "events", "--type", "retried", "--actor", "admin", "--since", "2026-11-25T05:00:00Z", "--limit", "5")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "retried") || !strings.Contains(lines[1], `{"from":"failed"}`) ||
		!strings.Contains(lines[2], "lane_paused") {
		t.Errorf("stdout:\n%s", out)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 pages", len(reqs))
	}
	q := reqs[0].Query
	if q.Get("type") != "retried" || q.Get("actor") != "admin" || q.Get("since") != "2026-11-25T05:00:00Z" || q.Get("limit") != "5" {
		t.Errorf("query %v", q)
	}
	if code, _, _ := runCLI(t, f.URL, "events", "--since", "yesterday"); code != exitUsage {
		t.Errorf("a bad --since: exit %d, want a usage error", code)
	}
}
