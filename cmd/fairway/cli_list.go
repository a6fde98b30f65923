package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["list"] = command{summary: "list jobs, newest first", run: runList}
}

const listAbout = `Lists jobs, newest first, one page (--limit) at a time; --all reads every
page. When more jobs remain, the command to read the next page is printed
on stderr.`

// jobStates are the states a job can be in, in lifecycle order.
var jobStates = []string{api.StateBlocked, api.StatePending, api.StateLeased, api.StateRunning,
	api.StateRetryWait, api.StateSucceeded, api.StateFailed, api.StateCancelled}

// listFlags are list's own flags.
type listFlags struct {
	states stringList
	opts   client.ListOptions
	all    bool
}

func (f *listFlags) register(c *cli) {
	c.fs.Var(&f.states, "state", "only jobs in this `state` (repeatable, or comma-separated)")
	c.fs.StringVar(&f.opts.Type, "type", "", "only jobs of this type")
	c.fs.StringVar(&f.opts.Lane, "lane", "", "only jobs in this lane")
	c.fs.StringVar(&f.opts.Tenant, "tenant", "", "only jobs of this tenant (admin keys)")
	c.fs.StringVar(&f.opts.Tag, "tag", "", "only jobs that carry this tag")
	c.fs.StringVar(&f.opts.ScheduleID, "schedule", "", "only the jobs of this schedule `ID`")
	c.fs.IntVar(&f.opts.Limit, "limit", 0, "jobs per page, 1..1000 (default: the server's, 100)")
	c.fs.StringVar(&f.opts.Cursor, "cursor", "", "start at this page (from a previous list)")
	c.fs.BoolVar(&f.all, "all", false, "read every page")
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("list", "[flags]", listAbout, stdout, stderr)
	var f listFlags
	f.register(c)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	for _, s := range f.states {
		for _, st := range strings.Split(s, ",") {
			if !slices.Contains(jobStates, st) {
				return c.usageErr("--state: unknown state %q; the states are %s", st, strings.Join(jobStates, ", "))
			}
			f.opts.States = append(f.opts.States, st)
		}
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	list, err := f.fetch(ctx, cl)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(list))
	}
	if err := c.jobTable(list.Jobs); err != nil {
		return c.fail(err)
	}
	if list.NextCursor != "" {
		fmt.Fprintf(c.stderr, "fairway: more jobs: %s (or --all)\n", f.nextPage(list.NextCursor))
	}
	return exitOK
}

// nextPage is the command line that reads the page after this one: the
// same filters and limit, and the new cursor.
func (f *listFlags) nextPage(cursor string) string {
	words := []string{"fairway", "list"}
	add := func(flag, value string) {
		if value != "" {
			words = append(words, flag, shellWord(value))
		}
	}
	add("--state", strings.Join(f.opts.States, ","))
	add("--type", f.opts.Type)
	add("--lane", f.opts.Lane)
	add("--tenant", f.opts.Tenant)
	add("--tag", f.opts.Tag)
	add("--schedule", f.opts.ScheduleID)
	if f.opts.Limit > 0 {
		add("--limit", strconv.Itoa(f.opts.Limit))
	}
	add("--cursor", cursor)
	return strings.Join(words, " ")
}

// shellWord quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellWord(s string) string {
	plain := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,/:=@+", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fetch reads one page, or every page with --all.
func (f *listFlags) fetch(ctx context.Context, cl *client.Client) (api.JobList, error) {
	if !f.all {
		return cl.List(ctx, f.opts)
	}
	list := api.JobList{Jobs: []api.Job{}}
	err := cl.ListAll(ctx, f.opts, func(j api.Job) error {
		list.Jobs = append(list.Jobs, j)
		return nil
	})
	return list, err
}

func (c *cli) jobTable(jobs []api.Job) error {
	tw := c.table()
	tableRow(tw, "ID", "STATE", "REASON", "TYPE", "TENANT", "LANE", "PRIO", "ATTEMPT", "CREATED", "NAME")
	for _, j := range jobs {
		tableRow(tw, j.ID, j.State, dashIfEmpty(j.Reason), j.Type, j.Tenant, j.Lane, strconv.Itoa(j.Priority),
			strconv.Itoa(j.Attempt), timeText(&j.CreatedAt), dashIfEmpty(j.Name))
	}
	return tw.Flush()
}
