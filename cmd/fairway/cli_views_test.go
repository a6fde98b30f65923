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

func TestCLILogs(t *testing.T) {
	pages := map[string]api.LogList{
		"":  {Chunks: []api.LogChunk{logChunk(1, "stdout", "a\n"), logChunk(2, "stderr", "oops\n")}},
		"2": {Chunks: []api.LogChunk{logChunk(3, "stdout", "b\n")}},
		"3": {Chunks: []api.LogChunk{}},
	}
	j := testJob("j1", api.StateSucceeded)
	j.Attempt = 1
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/jobs/{id}": replyWith(200, api.JobResponse{Job: j}),
		"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
			jsonReply(w, 200, pages[r.URL.Query().Get("after_seq")])
		},
	})
	code, out, errOut := runCLI(t, f.URL, "logs", "j1")
	if code != 0 || out != "a\nb\n" || errOut != "oops\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	reqs := f.requests()
	if len(reqs) != 5 || reqs[3].Query.Get("attempt") != "1" || reqs[3].Query.Get("after_seq") != "2" {
		t.Errorf("requests %+v", reqs)
	}

	code, out, _ = runCLI(t, f.URL, "logs", "j1", "--json")
	got := decodeJSON[api.LogList](t, out)
	if code != 0 || len(got.Chunks) != 3 || got.Chunks[1].Data != "oops\n" {
		t.Errorf("exit %d, %+v", code, got)
	}
}

func TestCLILogsFilters(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}/logs": replyWith(200, api.LogList{})})
	if code, out, _ := runCLI(t, f.URL, "logs", "--attempt", "2", "--stream", "stderr", "j1"); code != 0 || out != "" {
		t.Fatalf("exit %d", code)
	}
	want := url.Values{"attempt": {"2"}, "stream": {"stderr"}}
	if diff := cmp.Diff(want, f.only(t).Query); diff != "" {
		t.Errorf("query (-want +got)\n%s", diff)
	}
}

func followFake(t *testing.T) *apiFake {
	return newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("follow") != "true" {
			t.Errorf("query %v", r.URL.Query())
		}
		s := openSSE(w)
		s.send("log", logChunk(1, "stdout", "a\n"))
		s.send("log", logChunk(2, "stderr", "b\n"))
		s.send("end", api.LogEnd{State: api.StateFailed})
	}})
}

func TestCLILogsFollow(t *testing.T) {
	code, out, errOut := runCLI(t, followFake(t).URL, "logs", "-f", "j1")
	if code != 0 || out != "a\n" || errOut != "b\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// logs -f --json prints one JSON object per line: the chunks, then the end.
func TestCLILogsFollowJSON(t *testing.T) {
	code, out, errOut := runCLI(t, followFake(t).URL, "logs", "--follow", "--json", "j1")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || errOut != "" || len(lines) != 3 {
		t.Fatalf("exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	if ch := decodeJSON[api.LogChunk](t, lines[1]); ch.Stream != "stderr" || ch.Data != "b\n" {
		t.Errorf("line 2: %+v", ch)
	}
	if end := decodeJSON[api.LogEnd](t, lines[2]); end.State != api.StateFailed {
		t.Errorf("line 3: %+v", end)
	}
}

func TestCLILogsNotFound(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/jobs/{id}":      replyError(404, api.CodeNotFound, "no job j9"),
		"GET /api/v1/jobs/{id}/logs": replyError(404, api.CodeNotFound, "no job j9"),
	})
	for _, args := range [][]string{{"j9"}, {"-f", "j9"}} {
		if code, _, errOut := runCLI(t, f.URL, "logs", args...); code != exitNotFound || !strings.HasPrefix(errOut, "fairway: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestCLIWorkers(t *testing.T) {
	list := api.WorkerList{Workers: []api.WorkerInfo{
		{ID: "w1", Name: "host-1", Types: []string{"pdf", "xlsx"}, Labels: []string{"ssd"}, Slots: 4, CPU: 8, MemoryMB: 16384,
			State: "active", Running: 3, RegisteredAt: at, LastSeenAt: at},
		{ID: "w2", Name: "host-2", Slots: 1, CPU: 0.5, State: "draining", RegisteredAt: at, LastSeenAt: at},
	}}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/workers": replyWith(200, list)})
	code, out, errOut := runCLI(t, f.URL, "workers")
	want := `ID  NAME    STATE     RUNNING  SLOTS  CPU  MEM_MB  GPU  TYPES     LABELS  LAST_SEEN
w1  host-1  active    3        4      8    16384   0    pdf,xlsx  ssd     2026-11-21 06:00:00 UTC
w2  host-2  draining  0        1      0.5  0       0    *         -       2026-11-21 06:00:00 UTC
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = runCLI(t, f.URL, "workers", "--json")
	if diff := cmp.Diff(list, decodeJSON[api.WorkerList](t, out)); code != 0 || diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCLILanes(t *testing.T) {
	list := api.LaneList{
		Lanes: []api.LaneInfo{
			{Name: "batch", Weight: 1, Pending: 12, Queued: 15, Running: 2, Usage: api.Resources{CPU: 4, MemoryMB: 8192}, DominantShare: 0.5,
				Paused: true, PauseNote: "db migration"},
			{Name: "interactive", Weight: 3, Pending: 0, Running: 1, Usage: api.Resources{CPU: 0.5, GPU: 1}, DominantShare: 0.16667},
		},
		Capacity: api.Capacity{Resources: api.Resources{CPU: 8, MemoryMB: 32768, GPU: 2}, Slots: 10},
	}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/lanes": replyWith(200, list)})
	code, out, errOut := runCLI(t, f.URL, "lanes")
	want := `LANE         STATE   WEIGHT  PENDING  QUEUED  RUNNING  CPU  MEM_MB  GPU  SHARE
batch        paused  1       12       15      2        4    8192    0    0.500
interactive  active  3       0        0       1        0.5  0       1    0.167

capacity: 10 slots, 8 cpu, 32768 MB memory, 2 gpu
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	code, out, _ = runCLI(t, f.URL, "lanes", "--json")
	if diff := cmp.Diff(list, decodeJSON[api.LaneList](t, out)); code != 0 || diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// Item 12 of issue 28: after a lease was handed back uncharged (a
// restart), list, status and logs number attempts one way: the job's
// second lease is attempt 2 everywhere, of 4 (max_attempts 3 plus the
// hand-back), and status alone explains the hand-back.
func TestCLIAttemptNumberingAfterHandBack(t *testing.T) {
	j := testJob("j1", api.StateSucceeded)
	j.Attempt, j.ReturnedLeases, j.MaxAttempts, j.WorkerID = 2, 1, 3, "w2"
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"GET /api/v1/jobs":      replyWith(200, api.JobList{Jobs: []api.Job{j}}),
		"GET /api/v1/jobs/{id}": replyWith(200, api.JobResponse{Job: j}),
		"GET /api/v1/jobs/{id}/executions": replyWith(200, map[string]any{"executions": []api.Execution{
			{JobID: "j1", Attempt: 2, WorkerID: "w2", Outcome: api.OutcomeSucceeded}}}),
		"GET /api/v1/jobs/{id}/events": replyWith(200, api.EventList{Events: []api.Event{
			{ID: 1, JobID: "j1", Type: "submitted"},
			{ID: 2, JobID: "j1", Attempt: 1, Type: "leased", Detail: []byte(`{"worker":"w1"}`)},
			{ID: 3, JobID: "j1", Attempt: 1, Type: "lease_returned", Detail: []byte(`{"reason":"worker shut down while it ran","worker":"w1"}`)},
			{ID: 4, JobID: "j1", Attempt: 2, Type: "leased", Detail: []byte(`{"worker":"w2"}`)},
		}}),
		"GET /api/v1/jobs/{id}/logs": func(w http.ResponseWriter, r *http.Request) {
			one, two := logChunk(1, "stdout", "run\n"), logChunk(1, "stdout", "run\nend\n")
			one.Attempt, two.Attempt = 1, 2
			chunks := map[string][]api.LogChunk{"1": {one}, "2": {two}}[r.URL.Query().Get("attempt")]
			jsonReply(w, 200, api.LogList{Chunks: chunks})
		},
	})
	_, out, _ := runCLI(t, f.URL, "list")
	if fields := strings.Fields(strings.Split(out, "\n")[1]); fields[7] != "2" {
		t.Errorf("list's ATTEMPT %q, want 2:\n%s", fields[7], out)
	}
	_, out, _ = runCLI(t, f.URL, "status", "j1")
	if !strings.Contains(out, "attempts:  2 of 4 (max_attempts 3, plus 1 lease(s) handed back uncharged") {
		t.Errorf("status:\n%s", out)
	}
	if !strings.Contains(out, "state:     succeeded (attempt 2") {
		t.Errorf("status's state:\n%s", out)
	}
	code, out, errOut := runCLI(t, f.URL, "logs", "j1")
	want := "==> attempt 1 of 4: handed back uncharged (worker shut down while it ran) <==\n" +
		"==> attempt 2 of 4 on w2: succeeded <==\n"
	if code != 0 || out != "run\nrun\nend\n" || errOut != want {
		t.Errorf("logs: exit %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errOut, want)
	}
}

func TestCLILanesCosts(t *testing.T) {
	idle := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	list := api.LaneList{
		Lanes:    []api.LaneInfo{{Name: "default", Weight: 1}},
		Capacity: api.Capacity{Slots: 1},
		Costs: &api.Costs{
			FairnessKeys: []api.FairKeyCost{{Key: "user-8", Cost: 1, Jobs: 1}, {Key: "user-7", Cost: 2.5, IdleSince: &idle}},
			Learned:      []api.LearnedCost{{Type: "report", Key: "acct-42", Seconds: 3, LastUsed: idle}, {Type: "sync", Seconds: 0.25, LastUsed: idle}},
			Alpha:        0.3, DefaultCost: 1,
		},
	}
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/lanes": replyWith(200, list)})
	code, out, errOut := runCLI(t, f.URL, "lanes", "--costs")
	want := `LANE     STATE   WEIGHT  PENDING  QUEUED  RUNNING  CPU  MEM_MB  GPU  SHARE
default  active  1       0        0       0        0    0       0    0.000

capacity: 1 slots, 0 cpu, 0 MB memory, 0 gpu

fairness keys (lowest cost is served next among equal priorities):
KEY     ACCUMULATED_COST_S  JOBS  IDLE_SINCE
user-8  1.000               1     
user-7  2.500               0     2026-11-26 10:00:00 UTC

learned run times (alpha 0.3; never observed: the type's default_cost, else 1s):
TYPE    KEY      SECONDS  LAST_USED
report  acct-42  3.000    2026-11-26 10:00:00 UTC
sync    -        0.250    2026-11-26 10:00:00 UTC
`
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	if got := f.requests(); len(got) != 2 || got[1].Query.Get("costs") != "true" {
		t.Errorf("requests %v: want GET /lanes then GET /lanes?costs=true", got)
	}
}
