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

// Item 14 of issue 28: the reports, extend-sla and webhooks have CLI
// commands, as they have API routes.
func TestCLIReports(t *testing.T) {
	exit, compliance := 3, 0.9
	failures := api.FailureReport{Total: 25, Failed: 3, FailureRate: 0.12,
		ByOutcome: map[string]int64{"failed": 2, "timeout": 1}, ByClass: map[string]int64{"exit_code": 2, "timeout": 1},
		Recent: []api.FailedAttempt{{JobID: "j9", Attempt: 2, Outcome: "failed", FailureClass: "exit_code", ExitCode: &exit, Error: "exit code 3", FinishedAt: at}}}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/failures":       replyWith(200, failures),
		"GET /api/v1/successes":      replyWith(200, api.SuccessReport{Total: 25, Succeeded: 22, SuccessRate: 0.88, P50DurationMS: 1500}),
		"GET /api/v1/sla-compliance": replyWith(200, api.SLAReport{Total: 10, Met: 9, Violated: 1, Compliance: &compliance}),
	})
	code, out, errOut := runCmd(t, "report", "failures", "--server", f.URL, "--since", "2026-11-20T00:00:00Z", "--type", "report", "--tenant", "acme")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"total:", "25", "failure rate:", "0.120", "by outcome:", "failed 2, timeout 1",
		"recent:", "JOB_ID", "EXIT_CODE", "j9", "exit code 3", "2026-11-21 06:00:00"} {
		if !strings.Contains(out, want) {
			t.Errorf("failures lacks %q:\n%s", want, out)
		}
	}
	q := f.requests()[0].Query
	if q.Get("since") != "2026-11-20T00:00:00Z" || q.Get("type") != "report" || q.Get("tenant") != "acme" {
		t.Errorf("query %v", q)
	}
	if _, out, _ = runCmd(t, "report", "successes", "--server", f.URL); !strings.Contains(out, "p50 duration:") || !strings.Contains(out, "1.5s") {
		t.Errorf("successes:\n%s", out)
	}
	_, out, _ = runCmd(t, "report", "sla-compliance", "--server", f.URL, "--json")
	if got := decodeJSON[api.SLAReport](t, out); got.Violated != 1 || got.Compliance == nil || *got.Compliance != 0.9 {
		t.Errorf("sla-compliance --json: %+v", got)
	}
	for _, args := range [][]string{{"report", "failures", "--type", "a,b"}, {"report", "failures", "--since", "yesterday"}, {"report", "nope"}} {
		if code, _, _ := runCmd(t, append(args, "--server", f.URL)...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestCLIExtendSLA(t *testing.T) {
	j := testJob("j1", api.StateRunning)
	j.TimeoutMS = 40 * 60 * 1000
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs/{id}/extend-sla": replyWith(200, api.JobResponse{Job: j}),
	})
	code, out, errOut := runCLI(t, f.URL, "extend-sla", "j1", "30m")
	if code != 0 || out != "job j1: SLA extended by 30m0s: timeout 40m0s now\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var req api.ExtendSLARequest
	if err := json.Unmarshal(f.only(t).Body, &req); err != nil || req.ExtendMS != (30*time.Minute).Milliseconds() {
		t.Errorf("request %s (%v)", f.only(t).Body, err)
	}
	if code, _, _ := runCLI(t, f.URL, "extend-sla", "j1", "-5m"); code != exitUsage {
		t.Errorf("negative duration: exit %d", code)
	}
}

func TestCLIWebhooks(t *testing.T) {
	created := at
	hook := api.Webhook{Name: "pager", URL: "https://pager.example.com/hook", Kinds: []string{"job_failed"}, Source: "api", CreatedAt: &created, CreatedBy: "admin"}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/webhooks":          replyWith(201, map[string]api.Webhook{"webhook": hook}),
		"GET /api/v1/webhooks":           replyWith(200, api.WebhookList{Webhooks: []api.Webhook{hook, {Name: "ops", URL: "https://ops/", Source: "config"}}}),
		"DELETE /api/v1/webhooks/{name}": replyWith(200, map[string]string{"deleted": "pager"}),
	})
	withStdin(t, "0123456789abcdef-secret\n")
	code, out, errOut := runCmd(t, "webhooks", "create", "--server", f.URL, "--api-key", "k1", "--name", "pager",
		"--url", "https://pager.example.com/hook", "--secret", "-", "--kind", "job_failed")
	if code != 0 || out != "webhook pager created: https://pager.example.com/hook gets alerts of kinds job_failed, tenants *\n" {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	req := f.requests()[0]
	var got api.WebhookRequest
	if err := json.Unmarshal(req.Body, &got); err != nil {
		t.Fatal(err)
	}
	want := api.WebhookRequest{Name: "pager", URL: "https://pager.example.com/hook", Secret: "0123456789abcdef-secret", Kinds: []string{"job_failed"}}
	if diff := cmp.Diff(want, got); diff != "" || req.Header.Get("Authorization") != "Bearer k1" {
		t.Errorf("request (-want +got)\n%s\nauth %q", diff, req.Header.Get("Authorization"))
	}
	_, out, _ = runCmd(t, "webhooks", "list", "--server", f.URL)
	if !strings.Contains(out, "pager") || !strings.Contains(out, "job_failed") || !strings.Contains(out, "ops") || !strings.Contains(out, "config") {
		t.Errorf("list:\n%s", out)
	}
	if code, out, _ = runCmd(t, "webhooks", "delete", "--server", f.URL, "pager"); code != 0 || out != "webhook pager deleted\n" {
		t.Errorf("delete: exit %d, %q", code, out)
	}
	if p := f.requests()[2].Path; p != "/api/v1/webhooks/pager" {
		t.Errorf("delete path %s", p)
	}
}

// A refusal of a webhook call exits as any API refusal does.
func TestCLIWebhooksRefused(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/webhooks":           replyError(403, api.CodePermissionDenied, "only admin keys may manage webhooks"),
		"DELETE /api/v1/webhooks/{name}": replyError(404, api.CodeNotFound, "no webhook named nope"),
	})
	if code, _, errOut := runCmd(t, "webhooks", "list", "--server", f.URL); code != exitAPI || !strings.Contains(errOut, "list webhooks: permission_denied (403)") {
		t.Errorf("list: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "webhooks", "delete", "--server", f.URL, "nope"); code != exitNotFound || !strings.Contains(errOut, "no webhook named nope") {
		t.Errorf("delete: exit %d, %s", code, errOut)
	}
	if code, _, _ := runCmd(t, "webhooks", "create", "--server", f.URL, "--name", "x"); code != exitUsage {
		t.Errorf("create without --url: exit %d", code)
	}
}
