package main

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["workers"] = command{summary: "list the registered workers", run: runWorkers}
}

func runWorkers(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("workers", "[flags]", "Lists the registered workers: what they run, their slots and resources, and how busy they are.", stdout, stderr)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	workers, err := cl.Workers(ctx)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(api.WorkerList{Workers: emptyIfNil(workers)}))
	}
	tw := c.table()
	tableRow(tw, "ID", "NAME", "STATE", "RUNNING", "SLOTS", "CPU", "MEM_MB", "GPU", "TYPES", "LABELS", "LAST_SEEN")
	for _, w := range workers {
		tableRow(tw, w.ID, w.Name, w.State, strconv.Itoa(w.Running), strconv.Itoa(w.Slots),
			strconv.FormatFloat(w.CPU, 'g', -1, 64), strconv.FormatInt(w.MemoryMB, 10), strconv.FormatInt(w.GPU, 10),
			joinOr(w.Types, "*"), joinOr(w.Labels, "-"), timeText(&w.LastSeenAt))
	}
	return c.done(tw.Flush())
}

func joinOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ",")
}

// emptyIfNil makes an absent list print as [] rather than null.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
