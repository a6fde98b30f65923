package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["reprioritize"] = command{summary: "change a queued job's priority", run: runReprioritize}
}

const reprioritizeAbout = `Sets the priority (0..1000, higher first) of a job that has not started;
it keeps its place in time (its aging). A running or finished job is left as
it is (and the command still succeeds).`

func runReprioritize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("reprioritize", "ID PRIORITY [flags]", reprioritizeAbout, stdout, stderr)
	pos, code := c.parseN(args, 2, "a job ID and a PRIORITY")
	if code >= 0 {
		return code
	}
	prio, err := strconv.Atoi(pos[1])
	if err != nil {
		return c.usageErr("PRIORITY: want an integer, got %q", pos[1])
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	r, err := cl.Reprioritize(ctx, pos[0], prio)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	_, err = fmt.Fprintf(c.stdout, "job %s: %s\n", r.Job.ID, reprioritizeText(r))
	return c.done(err)
}

func reprioritizeText(r api.ActionResponse) string {
	switch r.Result {
	case api.ResultReprioritized:
		return "priority " + strconv.Itoa(r.Job.Priority)
	case api.ResultAlreadyRunning:
		return "already " + r.Job.State + ", priority unchanged"
	case api.ResultAlreadyFinished:
		return "already finished (" + r.Job.State + "), priority unchanged"
	}
	return r.Result + " (" + r.Job.State + ")"
}
