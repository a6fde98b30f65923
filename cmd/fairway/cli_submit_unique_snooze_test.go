package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestCLISubmitUnique(t *testing.T) {
	res := api.SubmitResponse{Job: testJob("j1", api.StateRunning), Deduplicated: true,
		UniqueMatch: &api.UniqueMatch{By: []string{"key", "type"}, States: []string{"pending", "running"}, JobID: "j1"}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs": replyWith(200, res)})
	code, out, errOut := runCLI(t, f.URL, "submit", "reindex", "--key", "repo-1", "--max-snoozes", "7",
		"--unique-by", "type,key", "--unique-states", "pending,running", "--unique-period", "10m")
	if code != 0 || out != "j1\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "unique rule (by key,type, states pending,running) matched job j1") {
		t.Errorf("stderr %q does not say which rule matched", errOut)
	}
	spec := decodeJSON[api.JobSpec](t, string(f.only(t).Body))
	if spec.MaxSnoozes != 7 {
		t.Errorf("max_snoozes %d, want 7", spec.MaxSnoozes)
	}
	got := spec.Unique
	want := &api.UniqueRule{By: []string{"type", "key"}, States: []string{"pending", "running"}, PeriodMS: new(int64(600000))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unique rule (-want +got)\n%s", diff)
	}
}

func TestCLISubmitUniqueBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"states without by": {"--unique-states", "pending"},
		"period without by": {"--unique-period", "10m"},
		"bad period":        {"--unique-by", "type", "--unique-period", "ten minutes"},
		"negative period":   {"--unique-by", "type", "--unique-period", "-1m"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "http://127.0.0.1:1", "submit", append([]string{"reindex"}, args...)...)
			if code != 2 || !strings.Contains(errOut, "--unique-") {
				t.Fatalf("exit %d, stderr %q; want a usage error naming the flag", code, errOut)
			}
		})
	}
}

// submit --wait says a snooze, and numbers the attempts after it as
// uncharged.
func TestJobTrailSaysASnooze(t *testing.T) {
	tr := &jobTrail{job: api.Job{MaxAttempts: 1}}
	runAt := at.Add(5 * time.Minute)
	for _, tc := range []struct {
		e    api.Event
		want string
	}{
		{api.Event{Type: "snoozed", Attempt: 1, Detail: json.RawMessage(`{"delay_ms":300000,"run_at":"` + runAt.Format(time.RFC3339) + `","snoozes":1}`)},
			"blocked (attempt 1 snoozed for 5m0s, uncharged: it runs again from 2026-11-21 06:05:00 UTC)"},
		{api.Event{Type: "leased", Attempt: 2, Detail: json.RawMessage(`{"worker":"w2"}`)}, "leased (attempt 2 of 2 on worker w2)"},
	} {
		if got, _ := tr.line(tc.e); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.e.Type, got, tc.want)
		}
	}
}
