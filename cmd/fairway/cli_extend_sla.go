package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

func init() {
	commands["extend-sla"] = command{summary: "give a job more time before its SLA limit", run: runExtendSLA}
}

const extendSLAAbout = `Extends the SLA of a job that has not ended: its timeout (the limit past
which a strict SLA stops it) and its expected time grow by DURATION, and
an sla_extended event records who did it.

  fairway extend-sla 01M87QQGNDM04AJ5NM84B7Q7BA 30m`

func runExtendSLA(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("extend-sla", "ID DURATION", extendSLAAbout, stdout, stderr)
	pos, code := c.parseN(args, 2, "a job ID and a DURATION")
	if code >= 0 {
		return code
	}
	by, err := time.ParseDuration(pos[1])
	if err != nil || by <= 0 || by%time.Millisecond != 0 {
		return c.usageErr("DURATION: want a positive duration such as 30m or 1h30m, got %q", pos[1])
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	j, err := cl.ExtendSLA(ctx, pos[0], by)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(j))
	}
	line := fmt.Sprintf("job %s: it has no timeout or expected time: nothing to extend", j.ID)
	if j.TimeoutMS > 0 || j.ExpectedMS > 0 {
		var now []string
		if j.TimeoutMS > 0 {
			now = append(now, "timeout "+msText(j.TimeoutMS))
		}
		if j.ExpectedMS > 0 {
			now = append(now, "expected "+msText(j.ExpectedMS))
		}
		line = fmt.Sprintf("job %s: SLA extended by %s: %s now", j.ID, by, strings.Join(now, ", "))
	}
	_, err = fmt.Fprintln(c.stdout, line)
	return c.done(err)
}
