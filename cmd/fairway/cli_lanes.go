package main

import (
	"context"

	"fmt"
	"github.com/fairwayhq/fairway/api"
	"io"
	"strconv"
)

func init() {
	commands["lanes"] = command{summary: "show each lane's queue, usage and fair share", run: runLanes}
}

const lanesAbout = `Shows each lane: its weight, its jobs (pending: runnable and waiting;
queued: every job not yet started; running), the resources its running jobs
use and its weighted dominant share (the lane with the smallest goes next),
then the pool's capacity. A paused lane (fairway lane pause) leases nothing.

--costs adds what fair queuing ranks jobs of equal priority by: each
fairness key's accumulated cost (lowest first: served next) and the run
time learned for each (type, resource key), which a job is charged when
it starts (admin and worker keys).`

func runLanes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("lanes", "[flags]", lanesAbout, stdout, stderr)
	withCosts := c.fs.Bool("costs", false, "also show fairness keys' accumulated costs and the learned run times")
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
	if *withCosts {
		costs, err := cl.Costs(ctx)
		if err != nil {
			return c.fail(err)
		}
		lanes.Costs = &costs
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
	if err == nil && lanes.Costs != nil {
		err = printCosts(c, *lanes.Costs)
	}
	return c.done(err)
}

// printCosts prints the fairness keys, lowest accumulated cost first, and
// the learned run times.
func printCosts(c *cli, costs api.Costs) error {
	if _, err := fmt.Fprintf(c.stdout, "\nfairness keys (lowest cost is served next among equal priorities):\n"); err != nil {
		return err
	}
	tw := c.table()
	tableRow(tw, "KEY", "ACCUMULATED_COST_S", "JOBS", "IDLE_SINCE")
	for _, k := range costs.FairnessKeys {
		tableRow(tw, k.Key, strconv.FormatFloat(k.Cost, 'f', 3, 64), strconv.Itoa(k.Jobs), timeOrEmpty(k.IdleSince))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.stdout, "\nlearned run times (alpha %s; never observed: the type's default_cost, else %ss):\n",
		floatText(costs.Alpha), floatText(costs.DefaultCost)); err != nil {
		return err
	}
	tw = c.table()
	tableRow(tw, "TYPE", "KEY", "SECONDS", "LAST_USED")
	for _, l := range costs.Learned {
		tableRow(tw, l.Type, dashIfEmpty(l.Key), strconv.FormatFloat(l.Seconds, 'f', 3, 64), timeText(&l.LastUsed))
	}
	return tw.Flush()
}

func floatText(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
