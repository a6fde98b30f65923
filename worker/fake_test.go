package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// guard bounds every wait so that a broken worker fails the test instead
// of hanging it. No test relies on it for synchronisation.
const guard = 10 * time.Second

// fakeServer implements the worker protocol in memory and records every
// call. Tests wait on its state with waitFor, never with sleeps.
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced at every change
	hbInterval time.Duration
	workers    map[string]bool
	nextWorker int
	nextJob    int
	queue      []string // job ids waiting for a lease
	jobs       map[string]*fakeJob
	calls      []fakeCall
	faults     map[string][]int // verb -> statuses to answer next
	registers  int
	// holdCompletes, when set, keeps complete calls waiting until it is
	// closed; completesIn counts those waiting, maxCompletesIn the most
	// at once.
	holdCompletes               chan struct{}
	completesIn, maxCompletesIn int
}

type fakeJob struct {
	job       api.Job
	attempt   int
	worker    string
	cancel    bool // tell the worker to cancel it
	preempt   bool // tell the worker it is preempted
	revoked   bool // tell the worker it is revoked
	completed []api.Completion
}

// fakeCall is one recorded request.
type fakeCall struct {
	verb    string
	worker  string
	status  int
	starts  []api.JobAttempt
	beats   []api.JobAttempt
	results []api.Completion
	chunks  []api.LogChunk
	max     int
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{
		t: t, changed: make(chan struct{}), hbInterval: 20 * time.Millisecond,
		workers: map[string]bool{}, jobs: map[string]*fakeJob{}, faults: map[string][]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/workers/register", f.register)
	mux.HandleFunc("POST /api/v1/workers/{id}/{verb}", f.workerCall)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a client of the fake with its own connections.
func (f *fakeServer) client(t *testing.T) *client.Client {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	c, err := client.New(f.srv.URL, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeServer) broadcastLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitFor waits until cond, called under the lock, holds.
func (f *fakeServer) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.NewTimer(guard)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			f.t.Fatalf("timed out waiting for %s; calls: %s", what, f.describe())
		}
	}
}

func (f *fakeServer) describe() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.describeLocked()
}

func (f *fakeServer) describeLocked() string {
	s := ""
	for _, c := range f.calls {
		s += fmt.Sprintf("\n  %s %s -> %d (starts %d, results %d, chunks %d)", c.verb, c.worker, c.status, len(c.starts), len(c.results), len(c.chunks))
	}
	return s
}

// addJob queues a job for leasing; its attempt will be job.Attempt+1.
func (f *fakeServer) addJob(j api.Job) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j.ID == "" {
		f.nextJob++
		j.ID = fmt.Sprintf("job-%d", f.nextJob)
	}
	if j.Type == "" {
		j.Type = "test"
	}
	f.jobs[j.ID] = &fakeJob{job: j, attempt: j.Attempt}
	f.queue = append(f.queue, j.ID)
	f.broadcastLocked()
	return j.ID
}

func (f *fakeServer) setJob(id string, fn func(*fakeJob)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.jobs[id])
	f.broadcastLocked()
}

// forgetWorkers makes every registered worker unknown (404 from now on).
func (f *fakeServer) forgetWorkers() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workers = map[string]bool{}
	f.broadcastLocked()
}

// fault makes the next calls of verb answer status, once per entry.
func (f *fakeServer) fault(verb string, statuses ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[verb] = append(f.faults[verb], statuses...)
}

// callsOf returns the recorded calls of verb (under the lock).
func (f *fakeServer) callsOf(verb string) []fakeCall {
	var out []fakeCall
	for _, c := range f.calls {
		if c.verb == verb {
			out = append(out, c)
		}
	}
	return out
}

// completions returns the accepted completions of a job (under the lock).
func (f *fakeServer) completions(id string) []api.Completion {
	return f.jobs[id].completed
}

func (f *fakeServer) register(w http.ResponseWriter, r *http.Request) {
	var req api.RegisterRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeFakeError(w, 400, api.CodeMalformedJSON)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.broadcastLocked()
	if st := f.faults["register"]; len(st) > 0 {
		f.faults["register"] = st[1:]
		f.calls = append(f.calls, fakeCall{verb: "register", status: st[0]})
		writeFakeError(w, st[0], api.CodePermissionDenied)
		return
	}
	f.nextWorker++
	f.registers++
	id := fmt.Sprintf("w-%d", f.nextWorker)
	f.workers[id] = true
	f.calls = append(f.calls, fakeCall{verb: "register", worker: id, status: 201})
	writeFakeJSON(w, 201, api.RegisterResponse{WorkerID: id, LeaseTTLMS: 30000, HeartbeatIntervalMS: f.hbInterval.Milliseconds()})
}

func (f *fakeServer) workerCall(w http.ResponseWriter, r *http.Request) {
	id, verb := r.PathValue("id"), r.PathValue("verb")
	if verb == "lease" {
		f.lease(w, r, id)
		return
	}
	var body struct {
		Jobs    []api.JobAttempt `json:"jobs"`
		Results []api.Completion `json:"results"`
		Chunks  []api.LogChunk   `json:"chunks"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeFakeError(w, 400, api.CodeMalformedJSON)
		return
	}
	if verb == "complete" {
		f.holdComplete()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.broadcastLocked()
	call := fakeCall{verb: verb, worker: id, starts: body.Jobs, results: body.Results, chunks: body.Chunks}
	if verb == "heartbeat" {
		call.starts, call.beats = nil, body.Jobs
	}
	status, out := f.answerLocked(call)
	call.status = status
	f.calls = append(f.calls, call)
	if status >= 400 {
		writeFakeError(w, status, fakeCodes[status])
		return
	}
	writeFakeJSON(w, status, out)
}

// holdComplete waits while holdCompletes is set and open.
func (f *fakeServer) holdComplete() {
	f.mu.Lock()
	hold := f.holdCompletes
	if hold == nil {
		f.mu.Unlock()
		return
	}
	f.completesIn++
	f.maxCompletesIn = max(f.maxCompletesIn, f.completesIn)
	f.broadcastLocked()
	f.mu.Unlock()
	select {
	case <-hold:
	case <-time.After(guard):
	}
	f.mu.Lock()
	f.completesIn--
	f.mu.Unlock()
}

// answerLocked applies one worker call and returns its answer.
func (f *fakeServer) answerLocked(c fakeCall) (int, any) {
	if st := f.faults[c.verb]; len(st) > 0 {
		f.faults[c.verb] = st[1:]
		return st[0], nil
	}
	if !f.workers[c.worker] {
		return 404, nil
	}
	switch c.verb {
	case "start":
		return 200, api.ItemResults{Results: f.itemsLocked(c.worker, c.starts)}
	case "complete":
		return 200, api.ItemResults{Results: f.completeLocked(c.worker, c.results)}
	case "heartbeat":
		return 200, f.heartbeatLocked(c.worker, c.beats)
	case "logs":
		return 200, api.LogAppendResponse{Accepted: len(c.chunks)}
	case "deregister":
		delete(f.workers, c.worker)
		return 200, struct{}{}
	}
	return 404, nil
}

func (f *fakeServer) current(worker string, a api.JobAttempt) *fakeJob {
	j := f.jobs[a.JobID]
	if j == nil || j.worker != worker || j.attempt != a.Attempt || j.revoked || len(j.completed) > 0 {
		return nil
	}
	return j
}

func (f *fakeServer) itemsLocked(worker string, as []api.JobAttempt) []api.ItemResult {
	out := make([]api.ItemResult, len(as))
	for i, a := range as {
		out[i] = api.ItemResult{JobID: a.JobID, OK: f.current(worker, a) != nil}
		if !out[i].OK {
			out[i].Error = &api.ErrorBody{Code: api.CodeStaleAttempt, Message: "stale"}
		}
	}
	return out
}

func (f *fakeServer) completeLocked(worker string, cs []api.Completion) []api.ItemResult {
	out := make([]api.ItemResult, len(cs))
	for i, c := range cs {
		j := f.current(worker, api.JobAttempt{JobID: c.JobID, Attempt: c.Attempt})
		out[i] = api.ItemResult{JobID: c.JobID, OK: j != nil}
		if j == nil {
			out[i].Error = &api.ErrorBody{Code: api.CodeStaleAttempt, Message: "stale"}
			continue
		}
		j.completed = append(j.completed, c)
	}
	return out
}

func (f *fakeServer) heartbeatLocked(worker string, held []api.JobAttempt) api.HeartbeatResponse {
	resp := api.HeartbeatResponse{LeaseExpiresAt: time.Now().Add(30 * time.Second)}
	for _, a := range held {
		j := f.jobs[a.JobID]
		switch {
		case j == nil || j.worker != worker || j.attempt != a.Attempt || j.revoked:
			resp.Revoked = append(resp.Revoked, a)
		case j.cancel:
			resp.Cancel = append(resp.Cancel, a)
		case j.preempt:
			resp.Preempt = append(resp.Preempt, a)
		}
	}
	return resp
}

// lease answers at once with queued jobs, else waits for one, the wait,
// or the client to go away.
func (f *fakeServer) lease(w http.ResponseWriter, r *http.Request, worker string) {
	var req api.LeaseRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeFakeError(w, 400, api.CodeMalformedJSON)
		return
	}
	timer := time.NewTimer(time.Duration(req.WaitMS) * time.Millisecond)
	defer timer.Stop()
	for {
		f.mu.Lock()
		status, leases := f.leaseLocked(worker, req.Max)
		ch := f.changed
		f.mu.Unlock()
		if status != 0 {
			if status >= 400 {
				writeFakeError(w, status, api.CodeNotFound)
				return
			}
			writeFakeJSON(w, 200, api.LeaseResponse{Leases: leases})
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			writeFakeJSON(w, 200, api.LeaseResponse{Leases: []api.Lease{}})
			return
		case <-r.Context().Done():
			return
		}
	}
}

// leaseLocked returns 0 when the poll must wait.
func (f *fakeServer) leaseLocked(worker string, max int) (int, []api.Lease) {
	if st := f.faults["lease"]; len(st) > 0 {
		f.faults["lease"] = st[1:]
		f.calls = append(f.calls, fakeCall{verb: "lease", worker: worker, status: st[0], max: max})
		return st[0], nil
	}
	if !f.workers[worker] {
		f.calls = append(f.calls, fakeCall{verb: "lease", worker: worker, status: 404, max: max})
		return 404, nil
	}
	if len(f.queue) == 0 {
		return 0, nil
	}
	n := min(max, len(f.queue))
	leases := make([]api.Lease, 0, n)
	for _, id := range f.queue[:n] {
		j := f.jobs[id]
		j.attempt++
		j.worker = worker
		job := j.job
		job.Attempt, job.State = j.attempt, api.StateLeased
		leases = append(leases, api.Lease{Job: job, Attempt: j.attempt, LeaseExpiresAt: time.Now().Add(30 * time.Second)})
	}
	f.queue = f.queue[n:]
	f.calls = append(f.calls, fakeCall{verb: "lease", worker: worker, status: 200, max: max})
	f.broadcastLocked()
	return 200, leases
}

var fakeCodes = map[int]string{
	400: api.CodeInvalidArgument, 403: api.CodePermissionDenied, 404: api.CodeNotFound, 503: api.CodeOverloaded,
}

func writeFakeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeFakeError(w http.ResponseWriter, status int, code string) {
	writeFakeJSON(w, status, api.ErrorResponse{Error: api.ErrorBody{Code: code, Message: code}})
}

// testOptions are Options for a worker of f with fast retries.
func testOptions(t *testing.T, f *fakeServer, handlers map[string]Handler) Options {
	return Options{
		Client: f.client(t), Name: "test", Slots: 4, Handlers: handlers,
		PollWait: 5 * time.Second, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Logger: testLogger(t),
	}
}

// startWorker runs a worker until the test ends; it returns Run's result
// channel.
func startWorker(t *testing.T, opts Options) (*Worker, <-chan error) {
	t.Helper()
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		_ = w.Stop(ctx) // returns once Run has
	})
	return w, done
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
