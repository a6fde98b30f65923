package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// Item 10 of issue 28: every filter flag reads its values one way:
// repeated or comma-separated. A filter the server matches against a list
// gets every value; one it matches against a single value refuses two
// (exit 2, nothing sent) instead of answering an empty table or keeping
// the last value.
func TestCLIFiltersOneWay(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/jobs":        replyWith(200, api.JobList{Jobs: []api.Job{}}),
		"GET /api/v1/events":      replyWith(200, api.EventList{Events: []api.Event{}}),
		"POST /api/v1/jobs/retry": replyWith(200, api.RetryResponse{}),
		"GET /api/v1/keys":        replyWith(200, api.KeyList{}),
	})
	// Lists: repeated and comma-separated values add up, duplicates once.
	for _, tc := range []struct {
		args  []string
		param string
		want  []string
	}{
		{[]string{"list", "--state", "failed, pending", "--state", "cancelled,failed"}, "state", []string{"failed", "pending", "cancelled"}},
		{[]string{"events", "--type", "lane_paused,lane_resumed", "--type", "retried"}, "type", []string{"lane_paused", "lane_resumed", "retried"}},
		{[]string{"list", "--type", "a,b,c"}, "type", []string{"a", "b", "c"}},
		{[]string{"list", "--type", "a", "--type", "b"}, "type", []string{"a", "b"}},
		{[]string{"list", "--lane", "x,y"}, "lane", []string{"x", "y"}},
	} {
		before := len(f.requests())
		if code, _, errOut := runCLI(t, f.URL, tc.args[0], tc.args[1:]...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
		}
		req := f.requests()[before]
		var got []string
		for _, v := range req.Query[tc.param] {
			got = append(got, strings.Split(v, ",")...)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %s=%v, want %v", tc.args, tc.param, got, tc.want)
		}
	}
	// One value, however spelled, is one value.
	before := len(f.requests())
	if code, _, errOut := runCLI(t, f.URL, "list", "--type", "report,", "--type", " report"); code != 0 {
		t.Fatalf("list --type report twice: exit %d: %s", code, errOut)
	}
	if got := f.requests()[before].Query["type"]; !slices.Equal(got, []string{"report"}) {
		t.Errorf("type=%v, want [report]", got)
	}
	// Single-value filters refuse two values, whichever way they come.
	before = len(f.requests())
	for _, args := range [][]string{
		{"list", "--tenant", "acme", "--tenant", "zed"},
		{"list", "--tag", "a,b"},
		{"list", "--schedule", "s1,s2"},
		{"events", "--job", "j1,j2"},
		{"events", "--actor", "admin", "--actor", "system"},
		{"retry", "--type", "a,b"},
		{"retry", "--class", "timeout", "--class", "oom"},
		{"retry", "--lane", "x,y"},
		{"keys list", "--tenant", "a,b"},
	} {
		cmd := strings.Fields(args[0])
		code, _, errOut := runCmd(t, append(append(cmd, "--server", f.URL), args[1:]...)...)
		flag := args[len(args)-2]
		if code != exitUsage || !strings.Contains(errOut, flag+": one value at a time") {
			t.Errorf("%v: exit %d, want 2 and %q: %s", args, code, flag+": one value at a time", errOut)
		}
	}
	for _, args := range [][]string{{"list", "--state", "done"}, {"list", "--type", ","}, {"retry", "--state", "succeeded"}} {
		if code, _, errOut := runCLI(t, f.URL, args[0], args[1:]...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errOut)
		}
	}
	if n := len(f.requests()) - before; n != 0 {
		t.Errorf("%d request(s) sent for refused filters", n)
	}
}
