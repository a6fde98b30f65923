package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
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
	w := &watcher{cl: cl, id: id, out: errw, last: stateKey(res.Job)}
	w.explainWait(ctx, res.Job)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx, stop)
	}()
	_, err := cl.FollowLogs(ctx, id, client.LogOptions{}, chunkPrinter(c.stdout, errw))
	close(stop)
	<-done
	if errors.Is(err, client.ErrNoEventStream) {
		_, err = cl.Wait(ctx, id)
	}
	if err != nil {
		return c.stopped(id, err)
	}
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

// watcher prints a job's state each time it changes, until told to stop.
type watcher struct {
	cl         *client.Client
	id         string
	out        io.Writer
	last       string
	lastReason string // the explain code last printed
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
		if r, err := w.cl.Get(ctx, w.id); err == nil {
			if w.show(r.Job) {
				delay = watchFirst
			}
			w.explainWait(ctx, r.Job)
		}
		t.Reset(delay)
	}
}

// explainWait prints why a waiting job waits, each time the reason
// changes, so that a job that cannot start says so.
func (w *watcher) explainWait(ctx context.Context, j api.Job) {
	if j.State != api.StatePending && j.State != api.StateBlocked {
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
	w.last = key
	fmt.Fprintf(w.out, "fairway: job %s %s\n", w.id, jobStateText(j))
	return true
}

func stateKey(j api.Job) string {
	return fmt.Sprintf("%s/%d", j.State, j.Attempt)
}

// jobStateText says a job's state in a few words.
func jobStateText(j api.Job) string {
	switch j.State {
	case api.StateLeased, api.StateRunning:
		return fmt.Sprintf("%s (attempt %d on worker %s)", j.State, j.Attempt, j.WorkerID)
	case api.StateRetryWait:
		return fmt.Sprintf("%s (attempt %d failed%s; it will be retried)", j.State, j.Attempt, failureText(j))
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
