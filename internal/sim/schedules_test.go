package sim

import (
	"errors"
	"strings"
	"testing"
)

const scheduleBase = `
pool: {slots: 1}
types: {report: {}, batch: {}}
`

func scheduleScenario(overlap string) string {
	return scheduleBase + `
schedules:
  - id: report
    spec: every 10s
    overlap: ` + overlap + `
    until: 60
    job: {type: report, duration: 15}
`
}

// A schedule whose runs outlast its interval: under skip every other slot
// is skipped; under buffer_all every slot runs, one after another, each
// later than the last.
func TestScheduleOverlapInTheSimulator(t *testing.T) {
	res := run(t, loadString(t, scheduleScenario("skip")))
	got := res.Summary.Schedules["report"]
	if got.Slots != 7 || got.Fired != 4 || got.Skipped != 3 || got.MaxLag != 0 {
		t.Errorf("skip: %+v, want 7 slots, 4 fired, 3 skipped, no lag", got)
	}
	admits := byID(res.Events, Admit)
	for _, id := range []string{"report@0.000", "report@20.000", "report@40.000", "report@60.000"} {
		if _, ok := admits[id]; !ok {
			t.Errorf("skip: %s never ran; admitted %v", id, admits)
		}
	}

	res = run(t, loadString(t, scheduleScenario("buffer_all")))
	got = res.Summary.Schedules["report"]
	if got.Slots != 7 || got.Fired != 7 || got.Skipped != 0 || got.P50Lag != 15 || got.MaxLag != 30 {
		t.Errorf("buffer_all: %+v, want 7 fired, lags 0,5,..,30", got)
	}
	if res.Summary.Done != 7 {
		t.Errorf("buffer_all: %d done, want 7", res.Summary.Done)
	}
}

// Scheduled jobs compete with a backlog like any job: at a higher
// priority they run next, and their lag is the wait for a free slot.
func TestScheduledJobsCompeteWithTheBacklog(t *testing.T) {
	res := run(t, loadString(t, scheduleBase+`
jobs:
  - {type: batch, priority: 100, duration: 4, count: 50, fairness_key: bulk}
schedules:
  - id: urgent
    spec: every 30s offset 5s
    until: 120
    job: {type: report, priority: 900, duration: 1}
`))
	got := res.Summary.Schedules["urgent"]
	if got.Fired != 4 || got.Skipped != 0 || got.MaxLag > 4 || got.MaxLag <= 0 {
		t.Errorf("%+v: want 4 fired, each waiting at most one batch job (4 s)", got)
	}
	if res.Summary.Jobs != 54 || res.Summary.Done != 54 {
		t.Errorf("jobs %d done %d, want 54", res.Summary.Jobs, res.Summary.Done)
	}
	var text strings.Builder
	if err := (textWriter{w: &text}).Summary(res.Summary); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "schedule  slots  fired") || !strings.Contains(text.String(), "lag: s from a slot") {
		t.Errorf("text summary lacks the schedule table or its legend:\n%s", text.String())
	}
}

func TestBadSchedulesAreScenarioErrors(t *testing.T) {
	cases := map[string]string{
		"schedules[0].until":     "schedules: [{id: a, spec: every 10s, job: {type: report}}]",
		"schedules[0].spec":      "schedules: [{id: a, spec: every soon, until: 10, job: {type: report}}]",
		"schedules[0].timezone":  "schedules: [{id: a, spec: '0 * * * *', timezone: Mars/Base, until: 10, job: {type: report}}]",
		"schedules[0].overlap":   "schedules: [{id: a, spec: every 10s, overlap: queue, until: 10, job: {type: report}}]",
		"schedules[0].job.count": "schedules: [{id: a, spec: every 10s, until: 10, job: {type: report, count: 3}}]",
		"schedules[0].job.type":  "schedules: [{id: a, spec: every 10s, until: 10, job: {type: nope}}]",
		"schedules[1].id":        "schedules: [{id: a, spec: every 10s, until: 10, job: {type: report}}, {id: a, spec: every 10s, until: 10, job: {type: report}}]",
	}
	for field, doc := range cases {
		_, err := Load(strings.NewReader(scheduleBase + doc))
		if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), field+":") {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// scenarios/schedules-reports-and-backlog.yaml: scheduled reports in a
// lane of their own are not held back by a backlog hours long.
func TestSchedulesScenarioReportsBeatTheBacklog(t *testing.T) {
	res := run(t, loadFile(t, "schedules-reports-and-backlog.yaml"))
	rec, settle := res.Summary.Schedules["reconcile"], res.Summary.Schedules["settle"]
	if rec.Slots != 7 || rec.Fired != 7 || rec.MaxLag > 240 {
		t.Errorf("reconcile %+v: want 7 hourly runs, each waiting at most one batch job", rec)
	}
	if settle.Slots != 73 || settle.Fired+settle.Skipped != 73 || settle.Skipped == 0 || settle.MaxLag > 420+240 {
		t.Errorf("settle %+v: want 73 slots, each fired or skipped, lag within its own previous run and one batch job", settle)
	}
	if res.Summary.Lanes["batch"].MaxWait < 3600 {
		t.Errorf("the batch backlog should still wait hours: %+v", res.Summary.Lanes["batch"])
	}
}
