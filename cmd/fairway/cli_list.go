package main

import (
	"context"
	"fmt"
	"io"
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
	states, typ, lane, tenant, tag, schedule *filterFlag
	opts                                     client.ListOptions
	all                                      bool
}

func (f *listFlags) register(c *cli) {
	f.states = c.filter("state", "only jobs in these `states` (any of them: repeat the flag or separate them with commas)", jobStates...)
	f.typ = c.filter("type", "only jobs of these `types` (any of them)")
	f.lane = c.filter("lane", "only jobs in these `lanes` (any of them)")
	f.tenant = c.filter("tenant", "only jobs of this `tenant` (one; admin keys)")
	f.tag = c.filter("tag", "only jobs that carry this `tag` (one)")
	f.schedule = c.filter("schedule", "only the jobs of this schedule `ID` (one)")
	c.fs.IntVar(&f.opts.Limit, "limit", 0, "jobs per page, 1..1000 (default: the server's, 100)")
	c.fs.StringVar(&f.opts.Cursor, "cursor", "", "start at this page (from a previous list)")
	c.fs.BoolVar(&f.all, "all", false, "read every page")
}

// options reads the filters into f.opts.
func (f *listFlags) options() error {
	var err error
	if f.opts.States, err = f.states.list(); err != nil {
		return err
	}
	if f.opts.Types, err = f.typ.list(); err != nil {
		return err
	}
	if f.opts.Lanes, err = f.lane.list(); err != nil {
		return err
	}
	return singles(map[*filterFlag]*string{f.tenant: &f.opts.Tenant, f.tag: &f.opts.Tag, f.schedule: &f.opts.ScheduleID})
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("list", "[flags]", listAbout, stdout, stderr)
	var f listFlags
	f.register(c)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	if err := f.options(); err != nil {
		return c.usageErr("%v", err)
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
	add("--type", strings.Join(f.opts.Types, ","))
	add("--lane", strings.Join(f.opts.Lanes, ","))
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
