package worker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// A handler's Snooze is reported as the snoozed outcome with its delay; a
// snooze of -1 or of ten years fails the attempt, saying why.
func TestHandlerSnoozes(t *testing.T) {
	f := newFakeServer(t)
	h := HandlerFunc(func(ctx context.Context, job Job) (json.RawMessage, error) {
		var delay string
		if err := json.Unmarshal(job.Payload, &delay); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(delay)
		if err != nil {
			return nil, err
		}
		return nil, Snooze(d)
	})
	startWorker(t, testOptions(t, f, map[string]Handler{"poll": h}))
	ok := f.addJob(api.Job{Type: "poll", Payload: json.RawMessage(`"5m"`)})
	negative := f.addJob(api.Job{Type: "poll", Payload: json.RawMessage(`"-1s"`)})
	decade := f.addJob(api.Job{Type: "poll", Payload: json.RawMessage(`"87600h"`)})
	f.waitFor("completions", func() bool {
		return len(f.completions(ok)) == 1 && len(f.completions(negative)) == 1 && len(f.completions(decade)) == 1
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.completions(ok)[0]; c.Outcome != api.OutcomeSnoozed || c.SnoozeMS != 300000 {
		t.Errorf("snooze 5m: completion %+v", c)
	}
	for _, id := range []string{negative, decade} {
		if c := f.completions(id)[0]; c.Outcome != api.OutcomeFailed || c.SnoozeMS != 0 || !strings.Contains(c.Error, "invalid snooze") {
			t.Errorf("completion %+v, want failed saying the snooze is invalid", c)
		}
	}
}

// A command snoozes its job by writing a delay to FAIRWAY_SNOOZE_FILE and
// exiting with the snooze exit code; the same exit code without a delay
// is a plain failure, and a delay that does not parse a failure that
// says so.
func TestCommandSnoozes(t *testing.T) {
	f := newFakeServer(t)
	startWorker(t, testOptions(t, f, map[string]Handler{"*": CommandHandler(CommandOptions{})}))
	sh := func(script string) string { return f.addJob(api.Job{Command: []string{"/bin/sh", "-c", script}}) }
	minutes := sh(`echo 5m > "$FAIRWAY_SNOOZE_FILE"; exit 75`)
	seconds := sh(`printf 90 > "$FAIRWAY_SNOOZE_FILE"; exit 75`)
	plain := sh(`exit 75`)
	garbage := sh(`echo soon > "$FAIRWAY_SNOOZE_FILE"; exit 75`)
	otherCode := sh(`echo 5m > "$FAIRWAY_SNOOZE_FILE"; exit 3`)
	f.waitFor("completions", func() bool {
		for _, id := range []string{minutes, seconds, plain, garbage, otherCode} {
			if len(f.completions(id)) != 1 {
				return false
			}
		}
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, want := range map[string]int64{minutes: 300000, seconds: 90000} {
		if c := f.completions(id)[0]; c.Outcome != api.OutcomeSnoozed || c.SnoozeMS != want {
			t.Errorf("completion %+v, want snoozed %d ms", c, want)
		}
	}
	for id, want := range map[string]string{plain: "exit code 75", garbage: "300 (seconds) or 5m", otherCode: "exit code 3"} {
		if c := f.completions(id)[0]; c.Outcome != api.OutcomeFailed || !strings.Contains(c.Error, want) {
			t.Errorf("completion %+v, want failed mentioning %q", c, want)
		}
	}
}
