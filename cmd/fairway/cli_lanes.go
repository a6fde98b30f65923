package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

func init() {
	commands["lanes"] = command{summary: "show each lane's queue, usage and fair share", run: runLanes}
}

const lanesAbout = `Shows each lane: its weight, its jobs (pending: runnable and waiting;
queued: every job not yet started; running), the resources its running jobs
use and its weighted dominant share (the lane with the smallest goes next),
then the pool's capacity. A paused lane (fairway lane pause) leases nothing.`

func runLanes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("lanes", "[flags]", lanesAbout, stdout, stderr)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	lanes, err := cl.Lanes(ctx)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		lanes.Lanes = emptyIfNil(lanes.Lanes)
		return c.done(c.printJSON(lanes))
	}
	tw := c.table()
	tableRow(tw, "LANE", "STATE", "WEIGHT", "PENDING", "QUEUED", "RUNNING", "CPU", "MEM_MB", "GPU", "SHARE")
	for _, l := range lanes.Lanes {
		state := "active"
		if l.Paused {
			state = "paused"
		}
		tableRow(tw, l.Name, state, floatText(l.Weight), strconv.Itoa(l.Pending), strconv.Itoa(l.Queued), strconv.Itoa(l.Running),
			floatText(l.Usage.CPU), strconv.FormatInt(l.Usage.MemoryMB, 10), strconv.FormatInt(l.Usage.GPU, 10),
			strconv.FormatFloat(l.DominantShare, 'f', 3, 64))
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	cp := lanes.Capacity
	_, err = fmt.Fprintf(c.stdout, "\ncapacity: %d slots, %s cpu, %d MB memory, %d gpu\n", cp.Slots, floatText(cp.CPU), cp.MemoryMB, cp.GPU)
	return c.done(err)
}

func floatText(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
