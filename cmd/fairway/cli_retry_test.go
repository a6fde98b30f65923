package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestCLIRetryOne(t *testing.T) {
	res := api.ActionResponse{Job: testJob("j1", api.StatePending), Result: api.ResultRetried}
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs/{id}/retry": replyWith(200, res)})
	code, out, errOut := runCLI(t, f.URL, "retry", "j1")
	if code != 0 || out != "job j1: retried: pending again, with one more attempt\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCLIRetryMatching(t *testing.T) {
	res := api.RetryResponse{Retried: []string{"j1", "j2"}, Skipped: []api.RetrySkipped{{ID: "j3", Result: api.ResultNotFinished}}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs/retry": replyWith(200, res)})
	code, out, errOut := runCLI(t, f.URL, "retry", "--type", "report", "--class", "timeout", "--limit", "50")
	want := "job j1: retried\njob j2: retried\njob j3: not finished, nothing changed\n2 retried, 1 left alone\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var got api.RetryRequest
	if err := json.Unmarshal(f.only(t).Body, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.RetryRequest{Type: "report", FailureClass: "timeout", Limit: 50}, got); diff != "" {
		t.Errorf("request (-want +got)\n%s", diff)
	}
}

func TestCLIRetryNeedsJobsOrFilters(t *testing.T) {
	f := newAPIFake(t, nil)
	for _, args := range [][]string{{}, {"j1", "--type", "report"}} {
		if code, _, errOut := runCLI(t, f.URL, "retry", args...); code != exitUsage || errOut == "" {
			t.Errorf("retry %v: exit %d, stderr %q, want a usage error", args, code, errOut)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
