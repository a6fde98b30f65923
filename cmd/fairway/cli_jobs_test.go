package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestCLIStatus(t *testing.T) {
	j := testJob("j1", api.StateRunning)
	j.Name, j.Key, j.Attempt, j.MaxAttempts, j.WorkerID = "nightly", "acct-42", 2, 3, "w1"
	j.Command, j.Resources, j.Labels, j.OnDemand = []string{"./r.sh", "a b"}, api.Resources{CPU: 0.5, MemoryMB: 256}, []string{"ssd"}, true
	j.TimeoutMS, j.SLAPolicy = 600000, "strict"
	j.DependsOn = []api.Dependency{{JobID: "j0"}}
	started := at.Add(time.Minute)
	j.StartedAt = &started
	exit := 1
	res := api.JobResponse{Job: j, Execution: &api.Execution{JobID: "j1", Attempt: 2, WorkerID: "w1"}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}": replyWith(200, res)})

	code, out, errOut := runCLI(t, f.URL, "status", "j1")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := `id:            j1
name:          nightly
type:          report
state:         running (attempt 2 of 3 on worker w1)
tenant:        acme
lane:          batch
key:           acct-42
priority:      500 (on demand)
resources:     0.5 cpu, 256 MB
labels:        ssd
command:       ./r.sh "a b"
attempts:      2 of 3
timeout:       10m0s
sla policy:    strict
depends on:    j0:success
created:       2026-11-21 06:00:00 UTC
started:       2026-11-21 06:01:00 UTC
worker:        w1
last attempt:  attempt 2 on w1: (in progress)
`
	if out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}

	res.Execution = &api.Execution{JobID: "j1", Attempt: 2, WorkerID: "w1", Outcome: "failed", ExitCode: &exit, DurationMS: 1500, FailureClass: "exit_code"}
	f = newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}": replyWith(200, res)})
	_, out, _ = runCLI(t, f.URL, "status", "j1")
	if !strings.Contains(out, "last attempt:  attempt 2 on w1: failed, exit code 1, 1.5s\nfailure:       exit_code\n") {
		t.Errorf("stdout %s", out)
	}

	code, out, _ = runCLI(t, f.URL, "status", "--json", "j1")
	if diff := cmp.Diff(res, decodeJSON[api.JobResponse](t, out)); code != 0 || diff != "" {
		t.Errorf("exit %d, (-want +got)\n%s", code, diff)
	}
}

func TestCLIStatusEscapesID(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}": replyWith(200, api.JobResponse{Job: testJob("a/b", "pending")})})
	if code, _, errOut := runCLI(t, f.URL, "status", "--", "a/b"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if p := f.only(t).Path; p != "/api/v1/jobs/a%2Fb" {
		t.Errorf("path %s", p)
	}
}

func TestCLIList(t *testing.T) {
	j2 := testJob("j2", api.StateFailed)
	j2.Name, j2.Attempt = "nightly", 1
	j1 := testJob("j1", api.StatePending)
	j1.Reason = "no_free_slot"
	page := api.JobList{Jobs: []api.Job{j2, j1}, NextCursor: "c1"}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs": replyWith(200, page)})

	code, out, errOut := runCLI(t, f.URL, "list", "--state", "failed,pending", "--state", "cancelled", "--type", "report",
		"--lane", "batch", "--tenant", "acme", "--limit", "2", "--cursor", "c0")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := `ID  STATE    REASON        TYPE    TENANT  LANE   PRIO  ATTEMPT  CREATED                  NAME
j2  failed   -             report  acme    batch  500   1        2026-11-21 06:00:00 UTC  nightly
j1  pending  no_free_slot  report  acme    batch  500   0        2026-11-21 06:00:00 UTC  -
`
	if out != want {
		t.Errorf("stdout\n%s\nwant\n%s", out, want)
	}
	if errOut != "fairway: more jobs: fairway list --state failed,pending,cancelled --type report --lane batch --tenant acme --limit 2 --cursor c1 (or --all)\n" {
		t.Errorf("stderr %q", errOut)
	}
	wantQuery := url.Values{"state": {"failed", "pending", "cancelled"}, "type": {"report"}, "lane": {"batch"},
		"tenant": {"acme"}, "limit": {"2"}, "cursor": {"c0"}}
	if diff := cmp.Diff(wantQuery, f.only(t).Query); diff != "" {
		t.Errorf("query (-want +got)\n%s", diff)
	}

	code, out, errOut = runCLI(t, f.URL, "list", "--json")
	if diff := cmp.Diff(page, decodeJSON[api.JobList](t, out)); code != 0 || errOut != "" || diff != "" {
		t.Errorf("exit %d, stderr %q, (-want +got)\n%s", code, errOut, diff)
	}
}

func TestCLIListAll(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			jsonReply(w, 200, api.JobList{Jobs: []api.Job{testJob("j3", "pending")}, NextCursor: "c1"})
			return
		}
		jsonReply(w, 200, api.JobList{Jobs: []api.Job{testJob("j2", "pending"), testJob("j1", "pending")}})
	}})
	code, out, errOut := runCLI(t, f.URL, "list", "--all", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got := decodeJSON[api.JobList](t, out)
	if len(got.Jobs) != 3 || got.Jobs[2].ID != "j1" || got.NextCursor != "" {
		t.Errorf("list %+v", got)
	}
	code, out, _ = runCLI(t, f.URL, "list", "--all")
	if code != 0 || strings.Count(out, "\n") != 4 {
		t.Errorf("exit %d, table\n%s", code, out)
	}
}

func TestCLIListEmptyJSON(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs": replyWith(200, api.JobList{Jobs: []api.Job{}})})
	code, out, _ := runCLI(t, f.URL, "list", "--all", "--json")
	if code != 0 || !strings.Contains(out, `"jobs": []`) {
		t.Errorf("exit %d, %s", code, out)
	}
}

func TestCLICancel(t *testing.T) {
	cases := map[string]struct {
		res  api.ActionResponse
		want string
	}{
		"pending":  {api.ActionResponse{Job: testJob("j1", api.StateCancelled), Result: api.ResultCancelled}, "job j1: cancelled\n"},
		"running":  {api.ActionResponse{Job: testJob("j1", api.StateRunning), Result: api.ResultCancelRequested}, "job j1: cancel requested: its worker is told now and stops it\n"},
		"finished": {api.ActionResponse{Job: testJob("j1", api.StateSucceeded), Result: api.ResultAlreadyFinished}, "job j1: already finished (succeeded), nothing changed\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs/{id}/cancel": replyWith(200, tc.res)})
			code, out, errOut := runCLI(t, f.URL, "cancel", "j1")
			if code != 0 || out != tc.want || errOut != "" {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			code, out, _ = runCLI(t, f.URL, "cancel", "j1", "--json")
			if diff := cmp.Diff(tc.res, decodeJSON[api.ActionResponse](t, out)); code != 0 || diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestCLICancelNotFound(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs/{id}/cancel": replyError(404, api.CodeNotFound, "no job j9")})
	code, _, errOut := runCLI(t, f.URL, "cancel", "j9")
	if code != exitNotFound || errOut != "fairway: cancel job j9: not_found (404): no job j9\n" {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestCLIReprioritize(t *testing.T) {
	j := testJob("j1", api.StatePending)
	j.Priority = 900
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs/{id}/reprioritize": replyWith(200, api.ActionResponse{Job: j, Result: api.ResultReprioritized}),
	})
	code, out, errOut := runCLI(t, f.URL, "reprioritize", "j1", "900")
	if code != 0 || out != "job j1: priority 900\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := string(f.only(t).Body); b != `{"priority":900}` {
		t.Errorf("body %s", b)
	}
	for result, want := range map[string]string{
		api.ResultAlreadyRunning:  "job j1: already running, priority unchanged\n",
		api.ResultAlreadyFinished: "job j1: already finished (failed), priority unchanged\n",
	} {
		state := map[string]string{api.ResultAlreadyRunning: "running", api.ResultAlreadyFinished: "failed"}[result]
		f := newAPIFake(t, map[string]http.HandlerFunc{
			"POST /api/v1/jobs/{id}/reprioritize": replyWith(200, api.ActionResponse{Job: testJob("j1", state), Result: result}),
		})
		if code, out, _ := runCLI(t, f.URL, "reprioritize", "j1", "5"); code != 0 || out != want {
			t.Errorf("%s: exit %d, stdout %q", result, code, out)
		}
	}
}

func TestCLIReprioritizeOutOfRange(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/jobs/{id}/reprioritize": replyWith(400, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInvalidArgument, Message: "must be between 0 and 1000", Field: "priority"}}),
	})
	if code, _, errOut := runCLI(t, f.URL, "reprioritize", "j1", "1001"); code != exitAPI || !strings.Contains(errOut, "[field priority]") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestCLIExplain(t *testing.T) {
	est := at.Add(5 * time.Minute)
	x := api.Explanation{JobID: "j1", State: "pending", Code: "tier_cap", Message: "tier background is at its cap of 4 running jobs",
		Blocker: "tier background", Lane: "batch", Score: 512, Position: 3, Queued: 9, EstimatedStart: &est}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}/explain": replyWith(200, x)})
	code, out, errOut := runCLI(t, f.URL, "explain", "j1")
	want := `job:              j1
state:            pending
lane:             batch
reason:           tier_cap
message:          tier background is at its cap of 4 running jobs
blocked by:       tier background
position:         3 of 9 queued in its lane
score:            512
estimated start:  2026-11-21 06:05:00 UTC
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = runCLI(t, f.URL, "explain", "--json", "j1")
	if diff := cmp.Diff(x, decodeJSON[api.Explanation](t, out)); code != 0 || diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
