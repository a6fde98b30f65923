package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// Issue 9 item 3: with server.unrunnable: refuse, a job no registered
// worker could ever run is refused at submit, naming what is missing in
// the units the user typed; with no worker registered yet it waits.
func TestAJobNoWorkerCouldRunIsRefused(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.Unrunnable = config.UnrunnableRefuse
	h := newHarness(t, cfg)
	early := h.submit(api.JobSpec{Type: "a", Resources: &api.Resources{CPU: 64}})
	if early.State != api.StatePending {
		t.Fatalf("with no worker registered the job is %s, want pending", early.State)
	}
	h.register(api.RegisterRequest{Name: "w", Slots: 2, CPU: 2, MemoryMB: 1024})
	var r api.ErrorResponse
	code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Resources: &api.Resources{CPU: 4}}, &r)
	if code != http.StatusUnprocessableEntity || r.Error.Code != api.CodeUnrunnable ||
		!strings.Contains(r.Error.Message, "asks for 4 cpu (the most a worker offers is 2)") {
		t.Errorf("cpu 4 on a 2-cpu worker: HTTP %d %+v", code, r.Error)
	}
	code = h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: []api.JobSpec{{Type: "a"}, {Type: "a", Labels: []string{"gpu"}}}}, &r)
	if code != http.StatusUnprocessableEntity || !strings.Contains(r.Error.Message, "jobs[1]: no registered worker") {
		t.Errorf("batch with an unrunnable job: HTTP %d %+v", code, r.Error)
	}
	if j := h.submit(api.JobSpec{Type: "a", Resources: &api.Resources{CPU: 1.5, MemoryMB: 512}}); j.State != api.StatePending && j.State != api.StateRunning {
		t.Errorf("a job that fits: %s", j.State)
	}
}

// Issue 9 item 8: a job without a command is refused at submit when every
// registered worker runs commands only; a worker with a handler for its
// type (or one that does not say, as older SDKs) lets it in.
func TestAJobWithoutACommandNeedsAHandler(t *testing.T) {
	h := newHarness(t, defaultConfig())
	h.register(api.RegisterRequest{Name: "runner", Slots: 1, Handlers: []string{}})
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "resize"}, &e); code != http.StatusBadRequest ||
		e.Error.Field != "command" || !strings.Contains(e.Error.Message, "fairway submit resize -- echo hi") {
		t.Fatalf("no command, no handler: HTTP %d %+v", code, e.Error)
	}
	if code := h.do("POST", "/jobs/batch", api.BatchRequest{Jobs: []api.JobSpec{{Type: "x", Command: []string{"true"}}, {Type: "resize"}}}, &e); code != http.StatusBadRequest ||
		e.Error.Field != "jobs[1].command" {
		t.Fatalf("no command in a batch: HTTP %d %+v", code, e.Error)
	}
	h.submit(api.JobSpec{Type: "resize", Command: []string{"true"}})
	h.register(api.RegisterRequest{Name: "sdk", Slots: 1, Handlers: []string{"resize"}})
	h.submit(api.JobSpec{Type: "resize", Payload: []byte(`{"w":640}`)})
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "thumbnail"}, &e); code != http.StatusBadRequest {
		t.Fatalf("a type no handler runs: HTTP %d", code)
	}
	h.register(api.RegisterRequest{Name: "old-sdk", Slots: 1}) // handlers not reported
	h.submit(api.JobSpec{Type: "thumbnail"})
	var ws api.WorkerList
	h.do("GET", "/workers", nil, &ws)
	for _, w := range ws.Workers {
		if w.Name == "sdk" && (len(w.Handlers) != 1 || w.Handlers[0] != "resize") {
			t.Errorf("GET /workers: sdk's handlers %v", w.Handlers)
		}
	}
}

// Issue 28 item 2: while the only workers of a type restart (a rolling
// deploy), a submit of that type is accepted and queued, with a warning in
// the answer, by default; refuse_unseen accepts it too, since a worker
// that ran the type registered before, but refuses a type no worker ever
// ran; refuse refuses both.
func TestSubmitsWhileATypesWorkersRestart(t *testing.T) {
	for _, tc := range []struct {
		mode                  string
		restarting, neverSeen int // HTTP status of each submit
	}{
		{"", http.StatusCreated, http.StatusCreated},
		{config.UnrunnableRefuseUnseen, http.StatusCreated, http.StatusUnprocessableEntity},
		{config.UnrunnableRefuse, http.StatusUnprocessableEntity, http.StatusUnprocessableEntity},
	} {
		t.Run("unrunnable="+tc.mode, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Server.Unrunnable = tc.mode
			h := newHarness(t, cfg)
			h.register(api.RegisterRequest{Name: "wa", Types: []string{"a"}, Slots: 1})
			wb := h.register(api.RegisterRequest{Name: "wb", Types: []string{"b"}, Slots: 1})
			if code := h.do("POST", "/workers/"+wb+"/deregister", nil, nil); code != http.StatusOK {
				t.Fatalf("deregister wb: HTTP %d", code)
			}
			var r api.SubmitResponse
			code := h.do("POST", "/jobs", api.JobSpec{Type: "b", Command: []string{"echo", "hi"}}, &r)
			if code != tc.restarting {
				t.Fatalf("submit of b while its worker restarts: HTTP %d, want %d", code, tc.restarting)
			}
			if code == http.StatusCreated {
				if r.Job.State != api.StatePending || len(r.Warnings) != 1 ||
					!strings.Contains(r.Warnings[0], `no registered worker runs type "b"`) || !strings.Contains(r.Warnings[0], "no_compatible_worker") {
					t.Fatalf("accepted as %s with warnings %q; want pending and a warning naming the type and the reason", r.Job.State, r.Warnings)
				}
				if got := h.get(r.Job.ID).Reason; got != "no_compatible_worker" {
					t.Errorf("reason %q, want no_compatible_worker", got)
				}
				wb2 := h.register(api.RegisterRequest{Name: "wb", Types: []string{"b"}, Slots: 1})
				if ls := h.lease(wb2, 1); len(ls) != 1 || ls[0].Job.ID != r.Job.ID {
					t.Fatalf("the restarted worker leased %v, want the queued job", ls)
				}
			}
			r = api.SubmitResponse{}
			if code := h.do("POST", "/jobs", api.JobSpec{Type: "c", Command: []string{"true"}}, &r); code != tc.neverSeen {
				t.Fatalf("submit of c, which no worker ever ran: HTTP %d, want %d", code, tc.neverSeen)
			}
			if tc.neverSeen == http.StatusCreated && len(r.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", r.Warnings)
			}
			var ok api.SubmitResponse
			h.do("POST", "/jobs", api.JobSpec{Type: "a", Command: []string{"true"}}, &ok)
			if len(ok.Warnings) != 0 {
				t.Errorf("a runnable job got warnings %q", ok.Warnings)
			}
		})
	}
}
