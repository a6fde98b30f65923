package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["explain"] = command{summary: "say why a job is not running", run: runExplain}
}

const explainAbout = `Says why a job is not running: the first constraint that holds it back
(no compatible worker, a cap, a conflict, a dependency, its run_at, its
lane over its fair share), its position in its lane and an estimated start.`

func runExplain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("explain", "ID [flags]", explainAbout, stdout, stderr)
	id, cl, code := c.oneJob(args)
	if code >= 0 {
		return code
	}
	x, err := cl.Explain(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(x))
	}
	tw := c.table()
	writeFields(tw, explainFields(x))
	return c.done(tw.Flush())
}

func explainFields(x api.Explanation) []field {
	f := []field{
		{"job", x.JobID}, {"state", x.State}, {"lane", x.Lane},
		{"reason", x.Code}, {"message", x.Message}, {"blocked by", x.Blocker},
	}
	if x.Position > 0 {
		f = append(f, field{"position", fmt.Sprintf("%d of %d queued in its lane", x.Position, x.Queued)})
	}
	if x.Score != 0 {
		f = append(f, field{"score", strconv.FormatInt(x.Score, 10)})
	}
	if r := x.Reservation; r != nil {
		f = append(f, field{"reservation", reservationText(x.JobID, r)})
	}
	if r := x.RateLimit; r != nil {
		f = append(f, field{"rate limit", fmt.Sprintf("%s: %d per %s, burst %d%s; next token at %s",
			r.Limit, r.Rate, r.Per, r.Burst, prefixed(", bucket "+r.By+" ", r.Value), r.NextToken.UTC().Format(time.RFC3339Nano))})
	}
	if q := x.Quota; q != nil {
		f = append(f, field{"tenant quota", fmt.Sprintf("%s %s of %s in use, the job needs %s",
			q.Resource, floatText(q.Used), floatText(q.Limit), floatText(q.Need))})
	}
	f = append(f, field{"estimated start", timeOrEmpty(x.EstimatedStart)})
	if x.EstimateBasis != "" {
		f = append(f, field{"estimate basis", x.EstimateBasis})
	}
	if x.EstimateNote != "" {
		f = append(f, field{"estimate note", x.EstimateNote})
	}
	return f
}

// reservationText says whose reservation it is, where, until when and
// what it waits for.
func reservationText(jobID string, r *api.Reservation) string {
	who := "job " + r.JobID + "'s, "
	if r.JobID == jobID {
		who = ""
	}
	by := "when unknown"
	if r.StartsBy != nil {
		by = "starts by " + timeOrEmpty(r.StartsBy)
	}
	return fmt.Sprintf("%son worker %s, %s, after %s end", who, r.WorkerID, by, strings.Join(r.WaitsFor, ", "))
}
