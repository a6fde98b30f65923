package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// How often submit --wait reads the job's state while its logs stream:
// from watchFirst, doubling to watchMax, back to watchFirst on a change.
const (
	watchFirst = 250 * time.Millisecond
	watchMax   = 2 * time.Second
)

// follow is submit --wait: it copies the job's output to stdout and
// stderr and its state changes to stderr until the job ends, then exits 0
// if it succeeded, 1 if not. With --json it prints nothing but the ended
// job.
func (c *cli) follow(ctx context.Context, cl *client.Client, res api.SubmitResponse) int {
	id := res.Job.ID
	if c.json {
		return c.waitJSON(ctx, cl, id)
	}
	errw := &lockedWriter{w: c.stderr}
	fmt.Fprintf(errw, "fairway: job %s submitted: %s\n", id, jobStateText(res.Job))
	w := &watcher{cl: cl, id: id, out: errw, last: stateKey(res.Job), attempt: res.Job.Attempt, trail: jobTrail{job: res.Job, worker: res.Job.WorkerID}}
	w.explainWait(ctx, res.Job.State)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx, stop)
	}()
	_, err := cl.FollowLogs(ctx, id, client.LogOptions{}, w.beforeAttempt(ctx, chunkPrinter(c.stdout, errw)))
	close(stop)
	<-done
	if errors.Is(err, client.ErrNoEventStream) {
		_, err = cl.Wait(ctx, id)
	}
	if err != nil {
		return c.stopped(id, err)
	}
	w.poll(ctx) // the transitions before the end that no poll has read yet
	return c.finish(ctx, cl, id, errw)
}

func (c *cli) waitJSON(ctx context.Context, cl *client.Client, id string) int {
	if _, err := cl.Wait(ctx, id); err != nil {
		return c.stopped(id, err)
	}
	r, err := cl.Get(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if err := c.printJSON(r); err != nil {
		return c.fail(err)
	}
	return jobExit(r.Job)
}

// finish reads the ended job, says how it ended and returns the exit code.
func (c *cli) finish(ctx context.Context, cl *client.Client, id string, errw io.Writer) int {
	r, err := cl.Get(ctx, id)
	if err != nil {
		return c.stopped(id, err)
	}
	fmt.Fprintf(errw, "fairway: job %s %s\n", id, jobStateText(r.Job))
	return jobExit(r.Job)
}

func jobExit(j api.Job) int {
	if j.State == api.StateSucceeded {
		return exitOK
	}
	return exitJobFailed
}

// stopped reports why following ended early; the job itself goes on.
func (c *cli) stopped(id string, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(c.stderr, "fairway: stopped following job %s; it goes on (fairway cancel %s stops it)\n", id, id)
		return exitInterrupted
	}
	return c.fail(err)
}

// watcher prints each transition of a job, and each attempt's outcome
// with its reason, as its audit trail records them, until told to stop.
// Where the trail cannot be read (a key that may not read events, an
// older server), it prints the job's state each time a read finds it
// changed.
type watcher struct {
	mu         sync.Mutex // one poll at a time
	cl         *client.Client
	id         string
	out        io.Writer
	last       string // the state key last printed
	lastReason string // the explain code last printed
	trail      jobTrail
	afterID    int64 // the last event read
	noTrail    bool  // the audit trail cannot be read: read the job's state
	attempt    int   // the attempt of the last state printed
	polledFor  int   // the attempt whose first output made beforeAttempt poll
}

// beforeAttempt wraps emit so that the first output of an attempt comes
// after the lines that say it started (one poll per attempt).
func (w *watcher) beforeAttempt(ctx context.Context, emit func(api.LogChunk) error) func(api.LogChunk) error {
	return func(ch api.LogChunk) error {
		w.mu.Lock()
		behind := ch.Attempt > w.attempt && ch.Attempt > w.polledFor
		w.polledFor = max(w.polledFor, ch.Attempt)
		w.mu.Unlock()
		if behind {
			w.poll(ctx)
		}
		return emit(ch)
	}
}

// run polls until stop is closed or ctx is done. A poll in flight when
// stop closes completes, so a change the server reported is printed.
func (w *watcher) run(ctx context.Context, stop <-chan struct{}) {
	delay := watchFirst
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		delay = min(delay*2, watchMax)
		if w.poll(ctx) {
			delay = watchFirst
		}
		t.Reset(delay)
	}
}

// poll prints what happened to the job since the last poll, and why it
// waits if it does. It reports whether it printed a transition.
func (w *watcher) poll(ctx context.Context) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.noTrail {
		changed, state, err := w.readTrail(ctx)
		if err == nil {
			if state == api.StatePending || state == api.StateBlocked {
				w.explainWait(ctx, state)
			}
			return changed
		}
		if e, ok := client.APIError(err); !ok || (e.Status != http.StatusForbidden && e.Status != http.StatusNotFound) {
			return false // try again at the next poll
		}
		w.noTrail = true
	}
	r, err := w.cl.Get(ctx, w.id)
	if err != nil {
		return false
	}
	changed := w.show(r.Job)
	w.explainWait(ctx, r.Job.State)
	return changed
}

// readTrail prints the job's events after the last one read. It reports
// whether one of them changed the job's state, and the state the last
// such one left it in ("" when none did).
func (w *watcher) readTrail(ctx context.Context) (changed bool, state string, err error) {
	for {
		page, err := w.cl.AuditEvents(ctx, client.EventOptions{JobID: w.id, AfterID: w.afterID, Limit: 1000})
		if err != nil {
			return changed, state, err
		}
		for _, e := range page.Events {
			w.afterID = max(w.afterID, e.ID)
			text, key := w.trail.line(e)
			if key != "" && key == w.last {
				continue // said already, by the submit line
			}
			if key != "" {
				w.last, w.attempt, changed = key, e.Attempt, true
				state, _, _ = strings.Cut(key, "/")
			}
			if text != "" {
				fmt.Fprintf(w.out, "fairway: job %s %s\n", w.id, text)
			}
		}
		if page.NextAfterID == 0 || len(page.Events) == 0 {
			return changed, state, nil
		}
	}
}

// explainWait prints why a waiting job waits, each time the reason
// changes, so that a job that cannot start says so.
func (w *watcher) explainWait(ctx context.Context, state string) {
	if state != api.StatePending && state != api.StateBlocked {
		return
	}
	x, err := w.cl.Explain(ctx, w.id)
	// queued (next in line) and running (just leased) are not worth a line.
	if err != nil || x.Code == "" || x.Code == "queued" || x.Code == "running" || x.Code == w.lastReason {
		return
	}
	w.lastReason = x.Code
	fmt.Fprintf(w.out, "fairway: job %s waits: %s (%s)\n", w.id, x.Message, x.Code)
}

// show prints j's state if it changed and is not the end (which follow
// prints itself). It reports whether it printed.
func (w *watcher) show(j api.Job) bool {
	key := stateKey(j)
	if key == w.last || api.Terminal(j.State) {
		return false
	}
	w.last, w.attempt = key, j.Attempt
	fmt.Fprintf(w.out, "fairway: job %s %s\n", w.id, jobStateText(j))
	return true
}

func stateKey(j api.Job) string {
	return keyOf(j.State, j.Attempt)
}

// jobStateText says a job's state in a few words.
func jobStateText(j api.Job) string {
	switch j.State {
	case api.StateLeased, api.StateRunning:
		return fmt.Sprintf("%s (%s on worker %s)", j.State, attemptOfText(j.Attempt, j), j.WorkerID)
	case api.StateRetryWait:
		return fmt.Sprintf("%s (%s failed%s; it will be retried)", j.State, attemptOfText(j.Attempt, j), failureText(j))
	case api.StateFailed:
		return fmt.Sprintf("%s (attempt %d%s)", j.State, j.Attempt, failureText(j))
	case api.StateSucceeded:
		return fmt.Sprintf("%s (attempt %d%s)", j.State, j.Attempt, runTime(j))
	}
	return j.State
}

// failureText is ": class, exit code N: error" with the parts the job has,
// each said once: "exit code 3" rather than "exit_code, exit code 3: exit
// code 3".
func failureText(j api.Job) string {
	var parts []string
	if j.FailureClass != "" && (j.FailureClass != api.FailExitCode || j.ExitCode == nil) {
		parts = append(parts, j.FailureClass)
	}
	if j.ExitCode != nil && (j.FailureClass == "" || j.FailureClass == api.FailExitCode) {
		parts = append(parts, fmt.Sprintf("exit code %d", *j.ExitCode))
	}
	s := strings.Join(parts, ", ")
	if j.LastError != "" && !strings.Contains(s, j.LastError) && !restatesExit(j.LastError, j.ExitCode) {
		s = strings.TrimPrefix(s+": "+j.LastError, ": ")
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// exitRestatement matches an error that only says the process exited
// non-zero, as older workers and Go's os/exec word it.
var exitRestatement = regexp.MustCompile(`^(runner: )?(non-zero )?exit (status|code) (\d+)$`)

// restatesExit says whether err adds nothing to the exit code.
func restatesExit(err string, code *int) bool {
	m := exitRestatement.FindStringSubmatch(err)
	return m != nil && code != nil && m[4] == strconv.Itoa(*code)
}

// runTime is ", ran D" when the job has both ends of its run.
func runTime(j api.Job) string {
	if j.StartedAt == nil || j.FinishedAt == nil {
		return ""
	}
	return ", ran " + j.FinishedAt.Sub(*j.StartedAt).Round(time.Millisecond).String()
}
