package main

import (
	"context"
	"fmt"
	"io"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["lane"] = command{summary: "pause or resume a lane (admin)", run: runLane}
}

const laneAbout = `Pauses or resumes a lane (admin keys), as River pauses a queue:

  fairway lane pause NAME [--note TEXT]
  fairway lane resume NAME

A paused lane leases nothing: its jobs keep their place and explain says
lane_paused; its running jobs finish. The pause outlives a restart. fairway
lanes shows each lane's state.`

func runLane(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verb := func(name string) verbFunc {
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			return laneVerb(ctx, name, args, stdout, stderr)
		}
	}
	return runVerbs(ctx, "lane", "pause|resume NAME [flags]", laneAbout,
		map[string]verbFunc{"pause": verb("pause"), "resume": verb("resume")}, args, stdout, stderr)
}

// laneVerb pauses (verb "pause") or resumes the lane args name.
func laneVerb(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	c := newCLI("lane "+verb, "NAME [flags]", laneAbout, stdout, stderr)
	var note string
	if verb == "pause" {
		c.fs.StringVar(&note, "note", "", "why, for the audit trail and fairway lanes")
	}
	pos, code := c.parseN(args, 1, "one lane name")
	if code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	var r api.LaneActionResponse
	var err error
	if verb == "pause" {
		r, err = cl.PauseLane(ctx, pos[0], note)
	} else {
		r, err = cl.ResumeLane(ctx, pos[0])
	}
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(r))
	}
	_, err = fmt.Fprintf(c.stdout, "lane %s: %s\n", pos[0], laneText(r))
	return c.done(err)
}

func laneText(r api.LaneActionResponse) string {
	switch r.Result {
	case api.ResultPaused:
		return fmt.Sprintf("paused: it leases nothing until resumed (%d queued, %d running jobs finish)", r.Lane.Queued, r.Lane.Running)
	case api.ResultAlreadyPaused:
		return "already paused, nothing changed"
	case api.ResultResumed:
		return fmt.Sprintf("resumed (%d queued)", r.Lane.Queued)
	case api.ResultNotPaused:
		return "not paused, nothing changed"
	}
	return r.Result
}
