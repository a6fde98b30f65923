package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["hold"] = command{summary: "set a job that has not started aside until it is released", run: runHold}
	commands["release"] = command{summary: "make a held job runnable again", run: runRelease}
}

func runHold(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return holdCommand(ctx, "hold", `Sets a job that has not started aside: it keeps its state and place, but is
never leased until 'fairway release'. explain and list say held.`, (*client.Client).Hold, args, stdout, stderr)
}

func runRelease(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return holdCommand(ctx, "release", "Makes a held job runnable again.", (*client.Client).Release, args, stdout, stderr)
}

func holdCommand(ctx context.Context, name, about string, act func(*client.Client, context.Context, string) (api.ActionResponse, error),
	args []string, stdout, stderr io.Writer) int {
	c := newCLI(name, "ID [flags]", about, stdout, stderr)
	id, cl, code := c.oneJob(args)
	if code >= 0 {
		return code
	}
	r, err := act(cl, ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	_, err = fmt.Fprintf(c.stdout, "job %s: %s\n", r.Job.ID, holdText(r))
	return c.done(err)
}

func holdText(r api.ActionResponse) string {
	switch r.Result {
	case api.ResultHeld:
		return "held: it starts only once released (fairway release " + r.Job.ID + ")"
	case api.ResultReleased:
		return "released"
	case api.ResultAlreadyHeld:
		return "already held, nothing changed"
	case api.ResultNotHeld:
		return "not held (" + r.Job.State + "), nothing changed"
	case api.ResultAlreadyRunning:
		return "already " + r.Job.State + ": a started job cannot be held"
	case api.ResultAlreadyFinished:
		return "already finished (" + r.Job.State + "), nothing changed"
	}
	return r.Result + " (" + r.Job.State + ")"
}
