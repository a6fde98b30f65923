package worker

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// A heartbeat answered after the server recorded an attempt's result
// lists the attempt as revoked. For an attempt whose completion is on its
// way that is no news: it is logged at debug, saying what happened, not
// as "lease revoked". A running attempt revoked is still logged at info.
func TestRevokedAfterItsResultIsNotReportedAsRevoked(t *testing.T) {
	f := newFakeServer(t)
	var logs bytes.Buffer
	opts := testOptions(t, f, map[string]Handler{"*": noop()})
	opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	sess := session{id: "w-1", gen: 1}
	done := newTask(context.Background(), sess, api.Lease{Job: api.Job{ID: "done"}, Attempt: 1})
	running := newTask(context.Background(), sess, api.Lease{Job: api.Job{ID: "running"}, Attempt: 1})
	w.mu.Lock()
	w.held[done.key], w.held[running.key] = done, running
	w.mu.Unlock()
	done.completion = api.Completion{JobID: "done", Attempt: 1, Outcome: api.OutcomeSucceeded}
	if !w.markReporting(done) {
		t.Fatal("markReporting refused")
	}

	w.applyHeartbeat(api.HeartbeatResponse{Revoked: []api.JobAttempt{{JobID: "done", Attempt: 1}, {JobID: "running", Attempt: 1}}})

	var doneLine, runningLine string
	for _, line := range strings.Split(logs.String(), "\n") {
		switch {
		case strings.Contains(line, "job=done"):
			doneLine = line
		case strings.Contains(line, "job=running"):
			runningLine = line
		}
	}
	if !strings.Contains(doneLine, "level=DEBUG") || strings.Contains(doneLine, "revoked") || !strings.Contains(doneLine, "outcome=succeeded") {
		t.Errorf("log of the attempt that had ended: %q; want a debug line saying it ended (succeeded), not revoked", doneLine)
	}
	if !strings.Contains(runningLine, "level=INFO") || !strings.Contains(runningLine, "lease revoked") {
		t.Errorf("log of the running attempt: %q; want info lease revoked", runningLine)
	}
}
