package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["schedule"] = command{summary: "create and manage schedules: recurring and one-time runs", run: runSchedule}
}

const scheduleAbout = `Manages schedules: a job template and when to run it (docs/schedules.md).

  fairway schedule create --spec SPEC [schedule flags] TYPE [job flags] [-- COMMAND]
  fairway schedule update ID --spec SPEC [schedule flags] TYPE [job flags] [-- COMMAND]
  fairway schedule list
  fairway schedule get ID
  fairway schedule pause ID [--note TEXT]
  fairway schedule resume ID [--note TEXT]
  fairway schedule trigger ID
  fairway schedule backfill ID --start TIME --end TIME [--overlap POLICY]
  fairway schedule events ID [--type TYPE]
  fairway schedule delete ID

SPEC is a cron expression ("0 9 * * 1-5"), an interval ("every 15m offset
5m") or one time ("at 2026-12-01T09:00:00+01:00"). The job flags are
submit's; --name names the schedule and its jobs, --tag tags both.`

// scheduleVerbs are the subcommands of fairway schedule.
var scheduleVerbs = map[string]verbFunc{
	"create": scheduleCreate, "update": scheduleUpdate, "list": scheduleList, "get": scheduleGet,
	"pause": schedulePause, "resume": scheduleResume, "trigger": scheduleTrigger,
	"backfill": scheduleBackfill, "delete": scheduleDelete, "events": scheduleEvents,
}

func runSchedule(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runVerbs(ctx, "schedule", "VERB ...", scheduleAbout+"\n\nRun 'fairway schedule VERB -h' for a verb's flags.",
		scheduleVerbs, args, stdout, stderr)
}

// scheduleFlags are the schedule's own flags of create and update.
type scheduleFlags struct {
	spec, timezone, overlap, start, end, note string
	catchup, jitter                           time.Duration
	pauseOnFailure, paused                    bool
}

func (f *scheduleFlags) register(c *cli) {
	c.fs.StringVar(&f.spec, "spec", "", "when to run: a cron expression, \"every 15m [offset 5m]\" or \"at TIME\" (required)")
	c.fs.StringVar(&f.timezone, "timezone", "", "IANA `zone` cron expressions are read in (default UTC)")
	c.fs.StringVar(&f.overlap, "overlap", "", "while a run is unfinished: skip (default), buffer_one, buffer_all, cancel_other or allow_all")
	c.fs.DurationVar(&f.catchup, "catchup-window", 0, "how late a missed slot may still run (default 15m)")
	c.fs.DurationVar(&f.jitter, "jitter", 0, "delay each run by up to this much")
	c.fs.StringVar(&f.start, "start", "", "no slot before this RFC 3339 `time`")
	c.fs.StringVar(&f.end, "end", "", "no slot after this RFC 3339 `time`")
	c.fs.BoolVar(&f.pauseOnFailure, "pause-on-failure", false, "pause the schedule when one of its jobs fails for good")
	c.fs.BoolVar(&f.paused, "paused", false, "create it paused")
	c.fs.StringVar(&f.note, "note", "", "why it is paused")
}

// scheduleSpec reads the schedule and template flags after parsing.
func scheduleSpec(f *scheduleFlags, jf *submitFlags, typ string, command []string) (api.ScheduleSpec, error) {
	switch {
	case f.spec == "":
		return api.ScheduleSpec{}, fmt.Errorf("--spec is required, e.g. --spec \"every 15m\" or --spec \"0 9 * * 1-5\"")
	case jf.wait || jf.runAt != "" || len(jf.after) > 0 || jf.idempotencyKey != "":
		return api.ScheduleSpec{}, fmt.Errorf("--wait, --run-at, --after and --idempotency-key do not apply to a schedule's jobs")
	}
	tmpl, err := jf.spec(typ, command, time.Now())
	if err != nil {
		return api.ScheduleSpec{}, err
	}
	out := api.ScheduleSpec{
		Tenant: tmpl.Tenant, Name: tmpl.Name, Tags: tmpl.Tags, Spec: f.spec, Timezone: f.timezone, Overlap: f.overlap,
		CatchupWindowMS: f.catchup.Milliseconds(), JitterMS: f.jitter.Milliseconds(),
		PauseOnFailure: f.pauseOnFailure, Paused: f.paused, Note: f.note,
	}
	tmpl.Tenant = ""
	out.Template = tmpl
	for _, b := range []struct {
		flag, v string
		dst     **time.Time
	}{{"--start", f.start, &out.StartAt}, {"--end", f.end, &out.EndAt}} {
		if b.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, b.v)
		if err != nil {
			return api.ScheduleSpec{}, fmt.Errorf("%s: want an RFC 3339 time, got %q", b.flag, b.v)
		}
		*b.dst = &t
	}
	return out, nil
}

func scheduleCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return scheduleWrite(ctx, "create", args, stdout, stderr)
}

func scheduleUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return scheduleWrite(ctx, "update", args, stdout, stderr)
}

// scheduleWrite is create and update: the same flags, and update names
// the schedule first.
func scheduleWrite(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	synopsis := "--spec SPEC [flags] TYPE [-- COMMAND [ARG...]]"
	want := 1
	if verb == "update" {
		synopsis, want = "ID "+synopsis, 2
	}
	c := newCLI("schedule "+verb, synopsis, scheduleAbout, stdout, stderr)
	var f scheduleFlags
	var jf submitFlags
	f.register(c)
	jf.registerTemplate(c.fs)
	pos, command, code := c.parse(args)
	if code >= 0 {
		return code
	}
	if len(pos) != want {
		return c.usageErr("want %s, got %d argument(s) before --", map[int]string{1: "the job TYPE", 2: "the schedule ID and the job TYPE"}[want], len(pos))
	}
	spec, err := scheduleSpec(&f, &jf, pos[want-1], command)
	if err != nil {
		return c.usageErr("%v", err)
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	var sc api.Schedule
	if verb == "update" {
		sc, err = cl.UpdateSchedule(ctx, pos[0], spec)
	} else {
		sc, err = cl.CreateSchedule(ctx, spec)
	}
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(sc))
	}
	fmt.Fprintln(c.stdout, sc.ID)
	if sc.NextRunAt != nil {
		fmt.Fprintf(c.stderr, "fairway: schedule %s: next run %s\n", sc.ID, zoneText(*sc.NextRunAt, sc.Timezone))
	}
	return exitOK
}

func scheduleList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule list", "[flags]", "Lists schedules, by id.", stdout, stderr)
	var opts client.ScheduleListOptions
	c.fs.StringVar(&opts.Tenant, "tenant", "", "only this tenant's (admin keys)")
	c.fs.StringVar(&opts.Tag, "tag", "", "only schedules that carry this tag")
	c.fs.IntVar(&opts.Limit, "limit", 0, "schedules per page, 1..1000 (default 100)")
	c.fs.StringVar(&opts.Cursor, "cursor", "", "start after this schedule id (from a previous page)")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	list, err := cl.ListSchedules(ctx, opts)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(list))
	}
	tw := c.table()
	tableRow(tw, "ID", "NAME", "SPEC", "TIMEZONE", "OVERLAP", "PAUSED", "FAILING", "NEXT_RUN", "LAST_RUN")
	for _, s := range list.Schedules {
		paused, failing := "-", "-"
		if s.Paused {
			paused = "yes"
		}
		if s.LastFailure != nil {
			failing = "yes"
		}
		tableRow(tw, s.ID, dashIfEmpty(s.Name), s.Spec, s.Timezone, s.Overlap, paused, failing,
			inZoneOrDash(s.NextRunAt, s.Timezone), inZoneOrDash(s.LastRunAt, s.Timezone))
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	if list.NextCursor != "" {
		fmt.Fprintf(c.stderr, "fairway: more schedules: fairway schedule list --cursor %s\n", list.NextCursor)
	}
	return exitOK
}

// inZoneOrDash is t in the schedule's zone, the zone named
// ("2026-11-26 09:00:00 CET"); "-" for none.
func inZoneOrDash(t *time.Time, zone string) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.In(scheduleLocation(zone)).Format("2006-01-02 15:04:05 MST")
}

// scheduleLocation is a schedule's zone; UTC when it cannot be loaded.
func scheduleLocation(zone string) *time.Location {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// zoneText is t in the schedule's zone, and in local time when that
// differs.
func zoneText(t time.Time, zone string) string {
	in := t.In(scheduleLocation(zone)).Format("2006-01-02 15:04:05 MST")
	local := t.In(time.Local).Format("2006-01-02 15:04:05 MST")
	if local == in {
		return in
	}
	return in + " (" + local + " local)"
}

func scheduleGet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule get", "ID", "Shows a schedule: its spec, its next times (in its zone and in local time) and its last runs.", stdout, stderr)
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	s, err := cl.GetSchedule(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(s))
	}
	tw := c.table()
	paused, failing := "", ""
	if s.Paused {
		paused = "yes " + s.Note
	}
	if f := s.LastFailure; f != nil {
		failing = fmt.Sprintf("the slot at %s created no job: %s", zoneText(f.ScheduledFor, s.Timezone), f.Error)
	}
	writeFields(tw, []field{
		{"id", s.ID}, {"name", s.Name}, {"tenant", s.Tenant}, {"spec", s.Spec}, {"timezone", s.Timezone},
		{"overlap", s.Overlap}, {"catch-up window", msText(s.CatchupWindowMS)}, {"jitter", msOrEmpty(s.JitterMS)},
		{"paused", strings.TrimSpace(paused)}, {"failing", failing},
		{"job", s.Template.Type + " " + commandText(s.Template.Command, s.Template.Shell)},
	})
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	fmt.Fprintln(c.stdout, "upcoming:")
	for _, t := range s.Upcoming {
		fmt.Fprintf(c.stdout, "  %s\n", zoneText(t, s.Timezone))
	}
	fmt.Fprintln(c.stdout, "recent runs:")
	rt := c.table()
	tableRow(rt, "  SCHEDULED_FOR", "JOB", "STATE", "LAG")
	for _, r := range s.Recent {
		lag := "-"
		if r.LagMS != nil {
			lag = msText(*r.LagMS)
		}
		tableRow(rt, "  "+inZoneOrDash(&r.ScheduledFor, s.Timezone), r.JobID, r.State, lag)
	}
	return c.done(rt.Flush())
}

func scheduleEvents(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule events", "ID [--type TYPE]",
		"Shows a schedule's history, oldest first: changes, and each slot fired, skipped by the overlap policy, missed past the catch-up window or failed.", stdout, stderr)
	var types stringList
	var limit int
	c.fs.Var(&types, "type", "only events of this `type` (repeatable): schedule_fired, schedule_skipped, schedule_missed, schedule_failed, ...")
	c.fs.IntVar(&limit, "limit", 1000, "at most this many events")
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	var all []api.Event
	opts := client.ScheduleEventOptions{Types: types, Limit: min(max(limit, 1), 1000)}
	for len(all) < limit {
		page, err := cl.ScheduleEvents(ctx, id, opts)
		if err != nil {
			return c.fail(err)
		}
		all = append(all, page.Events...)
		if page.NextAfterID == 0 {
			break
		}
		opts.AfterID = page.NextAfterID
	}
	all = all[:min(len(all), max(limit, 0))]
	if c.json {
		return c.done(c.printJSON(api.EventList{Events: all}))
	}
	tw := c.table()
	tableRow(tw, "AT", "EVENT", "JOB", "ACTOR", "DETAIL")
	for _, e := range all {
		tableRow(tw, inZoneOrDash(&e.At, "UTC"), e.Type, dashIfEmpty(e.JobID), e.Actor, scheduleEventDetail(e.Detail))
	}
	return c.done(tw.Flush())
}

// scheduleEventDetail is an event's detail without the schedule id the
// command was given.
func scheduleEventDetail(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	delete(m, "schedule_id")
	b, _ := json.Marshal(m)
	return string(b)
}

func schedulePause(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return scheduleNote(ctx, "pause", args, stdout, stderr)
}

func scheduleResume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return scheduleNote(ctx, "resume", args, stdout, stderr)
}

func scheduleNote(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule "+verb, "ID [--note TEXT]", "Pauses or resumes a schedule; a resumed schedule's missed slots meet its catch-up window.", stdout, stderr)
	var note string
	c.fs.StringVar(&note, "note", "", "why")
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	var s api.Schedule
	var err error
	if verb == "pause" {
		s, err = cl.PauseSchedule(ctx, id, note)
	} else {
		s, err = cl.ResumeSchedule(ctx, id, note)
	}
	if err != nil {
		return c.fail(err)
	}
	if c.json {
		return c.done(c.printJSON(s))
	}
	state := "resumed"
	if s.Paused {
		state = "paused"
	}
	fmt.Fprintf(c.stdout, "schedule %s: %s\n", s.ID, state)
	return exitOK
}

func scheduleTrigger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule trigger", "ID", "Fires a slot now, under the schedule's overlap policy; prints the job id. "+
		"When the slot's job cannot be created, says why and exits 4.", stdout, stderr)
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	res, err := cl.TriggerSchedule(ctx, id)
	if err != nil {
		return c.fail(err)
	}
	return c.printSlots(res)
}

func scheduleBackfill(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule backfill", "ID --start TIME --end TIME [--overlap POLICY]",
		"Fires the schedule's slots in [--start, --end) under --overlap (default skip); prints the job ids.", stdout, stderr)
	var start, end, overlap string
	c.fs.StringVar(&start, "start", "", "first slot time, RFC 3339 (required)")
	c.fs.StringVar(&end, "end", "", "end of the range, RFC 3339, exclusive (required)")
	c.fs.StringVar(&overlap, "overlap", "", "skip (default), buffer_one, buffer_all, cancel_other or allow_all")
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	req := api.ScheduleBackfillRequest{Overlap: overlap}
	var err error
	if req.StartTime, err = time.Parse(time.RFC3339, start); err != nil {
		return c.usageErr("--start: want an RFC 3339 time, got %q", start)
	}
	if req.EndTime, err = time.Parse(time.RFC3339, end); err != nil {
		return c.usageErr("--end: want an RFC 3339 time, got %q", end)
	}
	res, err := cl.BackfillSchedule(ctx, id, req)
	if err != nil {
		return c.fail(err)
	}
	return c.printSlots(res)
}

// printSlots prints the jobs a trigger or backfill created, and what
// waits, was skipped or failed. A slot whose job could not be created
// makes the exit code 4 (the server refused the work).
func (c *cli) printSlots(res api.ScheduleActionResponse) int {
	code := exitOK
	if len(res.Failed) > 0 {
		code = exitAPI
	}
	if c.json {
		if rc := c.done(c.printJSON(res)); rc != exitOK {
			return rc
		}
		return code
	}
	for _, id := range res.Fired {
		fmt.Fprintln(c.stdout, id)
	}
	if res.Buffered > 0 || res.Skipped > 0 {
		fmt.Fprintf(c.stderr, "fairway: schedule %s: %d slot(s) wait behind a running job, %d skipped by the overlap policy\n",
			res.Schedule.ID, res.Buffered, res.Skipped)
	}
	for _, f := range res.Failed {
		fmt.Fprintf(c.stderr, "fairway: schedule %s: the slot at %s created no job: %s\n",
			res.Schedule.ID, zoneText(f.ScheduledFor, res.Schedule.Timezone), f.Error)
	}
	return code
}

func scheduleDelete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("schedule delete", "ID", "Deletes a schedule; its unfinished jobs go on.", stdout, stderr)
	id, cl, code := c.oneID(args, "one schedule ID")
	if code >= 0 {
		return code
	}
	if err := cl.DeleteSchedule(ctx, id); err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(c.stdout, "schedule %s: deleted\n", id)
	return exitOK
}
