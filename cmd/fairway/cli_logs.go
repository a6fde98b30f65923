package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["logs"] = command{summary: "print a job's output (-f: follow it)", run: runLogs}
}

const logsAbout = `Prints a job's output: what it wrote to stdout goes to stdout, what it wrote
to stderr to stderr. With -f it keeps following until the job has ended.
--json prints {"chunks": [...]}; with -f, one JSON object per line: each
chunk, then {"state": ...} when the job ends.`

// logsFlags are logs' own flags.
type logsFlags struct {
	follow bool
	opts   client.LogOptions
}

func (f *logsFlags) register(c *cli) {
	c.fs.BoolVar(&f.follow, "f", false, "follow: print new output as it comes, until the job ends")
	c.fs.BoolVar(&f.follow, "follow", false, "same as -f")
	c.fs.IntVar(&f.opts.Attempt, "attempt", 0, "only this attempt (default: all)")
	c.fs.StringVar(&f.opts.Stream, "stream", "", "only this stream: stdout or stderr (default: both)")
	c.fs.StringVar(&f.opts.Grep, "grep", "", "only the lines that contain this `text` (case-sensitive; searched by the server)")
}

func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("logs", "ID [flags]", logsAbout, stdout, stderr)
	var f logsFlags
	f.register(c)
	pos, code := c.parseN(args, 1, "one job ID")
	if code >= 0 {
		return code
	}
	if !slices.Contains([]string{"", "stdout", "stderr"}, f.opts.Stream) {
		return c.usageErr("--stream: want stdout or stderr, got %q", f.opts.Stream)
	}
	if f.opts.Attempt < 0 {
		return c.usageErr("--attempt: must not be negative")
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	if f.follow && f.opts.Grep != "" {
		return c.usageErr("--grep searches the output so far; it does not go with -f")
	}
	if f.follow {
		return c.followLogs(ctx, cl, pos[0], f.opts)
	}
	return c.printLogs(ctx, cl, pos[0], f.opts)
}

// printLogs prints every chunk there is now; a job that ran more than
// once gets a header on stderr before each attempt's output.
func (c *cli) printLogs(ctx context.Context, cl *client.Client, id string, opts client.LogOptions) int {
	emit := chunkPrinter(c.stdout, c.stderr)
	var headers *attemptHeaders
	if !c.json && opts.Attempt == 0 {
		var err error
		if headers, err = newAttemptHeaders(ctx, cl, id, c.stderr); err != nil {
			return c.fail(err)
		}
		emit = headers.before(emit)
	}
	all := api.LogList{Chunks: []api.LogChunk{}}
	if c.json {
		emit = func(ch api.LogChunk) error {
			all.Chunks = append(all.Chunks, ch)
			return nil
		}
	}
	var err error
	if opts.Grep != "" {
		err = grepLogs(ctx, cl, id, opts, emit)
	} else {
		err = cl.LogsAll(ctx, id, opts, emit)
	}
	if err == nil && headers != nil {
		headers.through(headers.last)
	}
	if err == nil && c.json {
		err = c.printJSON(all)
	}
	return c.done(err)
}

// followLogs prints chunks as they come until the job ends.
func (c *cli) followLogs(ctx context.Context, cl *client.Client, id string, opts client.LogOptions) int {
	emit := chunkPrinter(c.stdout, c.stderr)
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	if c.json {
		emit = func(ch api.LogChunk) error { return enc.Encode(ch) }
	}
	if !c.json && opts.Attempt == 0 {
		headers := &attemptHeaders{w: c.stderr}
		emit = headers.before(emit)
	}
	if opts.Attempt > 0 {
		if err := checkAttempt(ctx, cl, id, opts.Attempt); err != nil {
			return c.fail(err)
		}
	}
	end, err := cl.FollowLogs(ctx, id, opts, emit)
	if err != nil {
		return c.stopped(id, err)
	}
	if c.json {
		return c.done(enc.Encode(end))
	}
	return exitOK
}

// chunkPrinter copies a chunk's data to stdout or stderr, as the job wrote it.
func chunkPrinter(stdout, stderr io.Writer) func(api.LogChunk) error {
	return func(ch api.LogChunk) error {
		w := stdout
		if ch.Stream == "stderr" {
			w = stderr
		}
		_, err := io.WriteString(w, ch.Data)
		return err
	}
}

// checkAttempt refuses to follow an attempt that an ended job never had
// (the server streams nothing for it): it would print nothing and exit 0.
func checkAttempt(ctx context.Context, cl *client.Client, id string, attempt int) error {
	r, err := cl.Get(ctx, id)
	if err != nil {
		return err
	}
	if api.Terminal(r.Job.State) && attempt > r.Job.Attempt {
		return &api.Error{Status: http.StatusNotFound, ErrorBody: api.ErrorBody{Code: api.CodeNotFound, Field: "attempt",
			Message: fmt.Sprintf("job %s has had %d attempt(s): there is no attempt %d", id, r.Job.Attempt, attempt)}}
	}
	return nil
}

// attemptHeaders writes "==> attempt N of M ... <==" before each
// attempt's output, so that the attempts of a retried job do not run
// together. Attempts are numbered as everywhere (status, list, events): N
// is the Nth lease of the job, and M the last attempt it may have
// (lastAttempt), as status's "attempts" line says.
type attemptHeaders struct {
	w        io.Writer
	total    int                   // M; 0 when unknown (following)
	last     int                   // the job's last attempt so far
	execs    map[int]api.Execution // by attempt, when known
	returned map[int]string        // attempts handed back uncharged: why
	printed  int                   // the last attempt whose header was written
}

// newAttemptHeaders reads the job's attempts; it returns nil (no headers)
// for a job that ran at most once.
func newAttemptHeaders(ctx context.Context, cl *client.Client, id string, w io.Writer) (*attemptHeaders, error) {
	job, err := cl.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if job.Job.Attempt <= 1 {
		return nil, nil
	}
	execs, err := cl.Executions(ctx, id)
	if err != nil {
		return nil, err
	}
	h := &attemptHeaders{w: w, total: max(lastAttempt(job.Job), job.Job.Attempt), last: job.Job.Attempt,
		execs: map[int]api.Execution{}, returned: map[int]string{}}
	for _, e := range execs {
		h.execs[e.Attempt] = e
	}
	if job.Job.ReturnedLeases > 0 {
		events, err := cl.Events(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, e := range events {
			if e.Type == "lease_returned" || e.Type == "unleased" {
				var d eventDetail
				_ = json.Unmarshal(e.Detail, &d)
				h.returned[e.Attempt] = firstNonEmpty(d.Reason, "withdrawn before it started")
			}
		}
	}
	return h, nil
}

// before wraps emit so that each chunk of a new attempt is preceded by the
// headers of that attempt and of any attempt before it without output.
func (h *attemptHeaders) before(emit func(api.LogChunk) error) func(api.LogChunk) error {
	if h == nil {
		return emit
	}
	return func(ch api.LogChunk) error {
		if ch.Attempt > h.printed && (h.total > 0 || h.printed > 0 || ch.Attempt > 1) {
			h.through(ch.Attempt)
		}
		h.printed = max(h.printed, ch.Attempt)
		return emit(ch)
	}
}

// through writes the headers of the attempts after the last one printed,
// up to attempt.
func (h *attemptHeaders) through(attempt int) {
	if h == nil {
		return
	}
	for n := h.printed + 1; n <= attempt; n++ {
		fmt.Fprintf(h.w, "==> %s <==\n", h.describe(n))
	}
	h.printed = max(h.printed, attempt)
}

func (h *attemptHeaders) describe(n int) string {
	s := fmt.Sprintf("attempt %d", n)
	if h.total > 0 {
		s += fmt.Sprintf(" of %d", h.total)
	}
	if why, ok := h.returned[n]; ok {
		return s + ": handed back uncharged (" + why + ")"
	}
	e, ok := h.execs[n]
	if !ok {
		return s
	}
	if e.WorkerID != "" {
		s += " on " + e.WorkerID
	}
	outcome := firstNonEmpty(e.Outcome, "running")
	if e.ExitCode != nil && e.Outcome != api.OutcomeSucceeded {
		outcome += fmt.Sprintf(", exit code %d", *e.ExitCode)
	}
	return s + ": " + outcome
}

// grepLogs prints the matching lines the server found, in order.
func grepLogs(ctx context.Context, cl *client.Client, id string, opts client.LogOptions, emit func(api.LogChunk) error) error {
	list, err := cl.Logs(ctx, id, opts)
	if err != nil {
		return err
	}
	for _, ch := range list.Chunks {
		if err := emit(ch); err != nil {
			return err
		}
	}
	return nil
}
