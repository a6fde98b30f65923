package sim

import (
	"errors"
	"strings"
	"testing"
)

// A job that snoozes twice runs three times: each snoozed run holds its
// slot for its duration, then the job waits its delay blocked while the
// other job runs, and its last run succeeds.
func TestSnoozeBlocksTheJobForItsDelay(t *testing.T) {
	s := loadString(t, `
pool: {slots: 1}
types: {t: {}}
jobs:
  - {id: poll, type: t, duration: 1, snooze: {times: 2, delay: 10}}
  - {id: other, at: 0.5, type: t, duration: 4}
`)
	res := run(t, s)
	var got []string
	for _, e := range res.Events {
		if e.ID == "poll" || e.Kind == Admit {
			got = append(got, e.Kind.String()+" "+e.ID+" "+strings.TrimSuffix(strings.TrimRight(sec(e.T()).String(), "0"), "."))
		}
	}
	want := []string{
		"arrive poll 0s", "admit poll 0s", "snooze poll 1s", // blocked until 11 s
		"admit other 1s",                    // the slot goes to other meanwhile
		"admit poll 11s", "snooze poll 12s", // blocked until 22 s
		"admit poll 22s", "done poll 23s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Summary.Snoozes != 2 || res.Summary.Done != 2 || res.Summary.Pending != 0 || res.Summary.Running != 0 {
		t.Fatalf("summary: %+v", res.Summary)
	}
}

func TestBadSnoozeIsAScenarioError(t *testing.T) {
	for field, doc := range map[string]string{
		"jobs[0].snooze.times":  `{times: 0, delay: 5}`,
		"jobs[0].snooze.delay":  `{times: 1, delay: -1}`,
		"jobs[0].snooze.delay ": `{times: 1, delay: 315360000}`,
	} {
		_, err := Load(strings.NewReader("pool: {slots: 1}\ntypes: {t: {}}\njobs:\n  - {type: t, duration: 1, snooze: " + doc + "}\n"))
		if !errors.Is(err, ErrScenario) || !strings.Contains(err.Error(), strings.TrimSpace(field)) {
			t.Errorf("snooze %s: err = %v, want a scenario error naming %s", doc, err, field)
		}
	}
}
