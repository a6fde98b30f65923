package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["retry"] = command{summary: "send failed or cancelled jobs back to the queue", run: runRetry}
}

const retryAbout = `Sends failed or cancelled jobs back to the queue: each gets one more attempt,
keeps its executions, logs and audit trail, and a "retried" event records
who did it. Name the jobs (fairway retry ID [ID...]), or match them:

  fairway retry --type nightly-report --class timeout
  fairway retry --state cancelled --lane batch --limit 500

A job that has not ended is left alone; one that succeeded cannot be retried.`

func runRetry(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("retry", "[ID...] [flags]", retryAbout, stdout, stderr)
	var req api.RetryRequest
	typ := c.filter("type", "match jobs of this `type` (one)")
	class := c.filter("class", "match failed jobs whose last attempt failed with this `class` (one): exit_code, timeout, killed, oom, lost_worker, cancelled, start_error")
	state := c.filter("state", "match jobs in this `state` (one): failed (default) or cancelled", api.StateFailed, api.StateCancelled)
	lane := c.filter("lane", "match jobs in this `lane` (one)")
	tenant := c.filter("tenant", "match jobs of this `tenant` (one; admin keys)")
	c.fs.IntVar(&req.Limit, "limit", 0, "retry at most `N` matched jobs (default 100, at most 1000)")
	pos, rest, code := c.parse(args)
	if code >= 0 {
		return code
	}
	if err := singles(map[*filterFlag]*string{typ: &req.Type, class: &req.FailureClass, state: &req.State, lane: &req.Lane, tenant: &req.Tenant}); err != nil {
		return c.usageErr("%v", err)
	}
	req.IDs = append(pos, rest...)
	matching := req.Type != "" || req.FailureClass != "" || req.State != "" || req.Lane != "" || req.Tenant != "" || req.Limit != 0
	switch {
	case len(req.IDs) == 0 && !matching:
		return c.usageErr("name jobs, or match them with --type, --class, --state, --lane or --tenant")
	case len(req.IDs) > 0 && matching:
		return c.usageErr("name jobs or match them with flags, not both")
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	if len(req.IDs) == 1 {
		r, err := cl.Retry(ctx, req.IDs[0])
		if err != nil {
			return c.fail(err)
		}
		if c.json {
			return c.done(c.printJSON(r))
		}
		_, err = fmt.Fprintf(c.stdout, "job %s: %s\n", r.Job.ID, retryText(r.Result, r.Job.State))
		return c.done(err)
	}
	r, err := cl.RetryMany(ctx, req)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	var b strings.Builder
	for _, id := range r.Retried {
		fmt.Fprintf(&b, "job %s: retried\n", id)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "job %s: %s\n", s.ID, retryText(s.Result, ""))
	}
	fmt.Fprintf(&b, "%d retried, %d left alone\n", len(r.Retried), len(r.Skipped))
	_, err = io.WriteString(c.stdout, b.String())
	return c.done(err)
}

func retryText(result, state string) string {
	switch result {
	case api.ResultRetried:
		return "retried: pending again, with one more attempt"
	case api.ResultNotFinished:
		if state != "" {
			return "not finished (" + state + "), nothing changed"
		}
		return "not finished, nothing changed"
	case api.ResultNotRetriable:
		return "succeeded: only failed or cancelled jobs can be retried"
	case api.ResultNotFound:
		return "not found (deleted by retention?)"
	case api.CodeConflict:
		return "changed meanwhile; try again"
	}
	return result
}
