package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["cancel"] = command{summary: "cancel a job", run: runCancel}
}

const cancelAbout = `Cancels a job. A queued job is cancelled at once; a running one is stopped
by its worker, which is told at once; a finished one is left as it is (and
the command still succeeds).`

func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("cancel", "ID [flags]", cancelAbout, stdout, stderr)
	id, cl, code := c.oneJob(args)
	if code >= 0 {
		return code
	}
	r, err := cl.Cancel(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	_, err = fmt.Fprintf(c.stdout, "job %s: %s\n", r.Job.ID, cancelText(r))
	return c.done(err)
}

func cancelText(r api.ActionResponse) string {
	switch r.Result {
	case api.ResultCancelled:
		return "cancelled"
	case api.ResultCancelRequested:
		return "cancel requested: its worker is told now and stops it"
	case api.ResultAlreadyFinished:
		return "already finished (" + r.Job.State + "), nothing changed"
	}
	return r.Result + " (" + r.Job.State + ")"
}
