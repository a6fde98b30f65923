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
