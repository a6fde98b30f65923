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
	commands["lanes"] = command{summary: "show each lane's queue, usage and fair share", run: runLanes}
}

const lanesAbout = `Shows each lane: its weight, its jobs (pending: runnable and waiting;
queued: every job not yet started; running), the resources its running jobs
use and its weighted dominant share (the lane with the smallest goes next),
then the pool's capacity. A paused lane (fairway lane pause) leases nothing.
Then the rate limits on starts (rate_limits in the config) with their
buckets that are not full: tokens left and when the next comes.

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
	if _, err = fmt.Fprintf(c.stdout, "\ncapacity: %d slots, %s cpu, %d MB memory, %d gpu\n", cp.Slots, floatText(cp.CPU), cp.MemoryMB, cp.GPU); err != nil {
		return c.fail(err)
	}
	err = writeRateLimits(c, lanes.RateLimits)
	if err == nil && lanes.Costs != nil {
		err = printCosts(c, *lanes.Costs)
	}
	return c.done(err)
}

// writeRateLimits lists the rate limits and their buckets that are not
// full.
func writeRateLimits(c *cli, limits []api.RateLimitInfo) error {
	if len(limits) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(c.stdout); err != nil {
		return err
	}
	tw := c.table()
	tableRow(tw, "RATE LIMIT", "MATCH", "BY", "RATE", "BURST", "BUCKET", "TOKENS", "NEXT TOKEN")
	for _, r := range limits {
		match := strings.TrimSpace(strings.Join([]string{prefixed("type ", r.Type), prefixed("lane ", r.Lane)}, " "))
		if match == "" {
			match = "every job"
		}
		rate := fmt.Sprintf("%d/%s", r.Rate, r.Per)
		if len(r.Buckets) == 0 {
			tableRow(tw, r.Name, match, dashIfEmpty(r.By), rate, strconv.FormatInt(r.Burst, 10), "-", "full", "-")
		}
		for _, b := range r.Buckets {
			tableRow(tw, r.Name, match, dashIfEmpty(r.By), rate, strconv.FormatInt(r.Burst, 10), dashIfEmpty(b.Value),
				strconv.FormatFloat(b.Tokens, 'f', 2, 64), b.NextToken.UTC().Format(time.RFC3339Nano))
		}
		if more := r.BucketsNotFull - len(r.Buckets); more > 0 {
			tableRow(tw, r.Name, "", "", "", "", fmt.Sprintf("(%d more not full)", more), "", "")
		}
	}
	return tw.Flush()
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
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
