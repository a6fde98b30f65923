package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// Issue 9 item 3: a job no registered worker could ever run is refused at
// submit, naming what is missing in the units the user typed; with no
// worker registered yet it waits.
func TestAJobNoWorkerCouldRunIsRefused(t *testing.T) {
	h := newHarness(t, defaultConfig())
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
	if j := h.submit(api.JobSpec{Type: "a", Resources: &api.Resources{CPU: 1.5, MemoryMB: 512}}); j.State != api.StatePending && j.State != api.StateLeased {
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
