package main

// The CLI against the real job server (internal/server on SQLite), with a
// test worker speaking the protocol through the client package.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/server/servertest"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// realServer runs a server on a fresh SQLite file; it returns its URL and
// a client for it.
func realServer(t *testing.T) (string, *client.Client) {
	t.Helper()
	url := servertest.Start(t, nil)
	c, err := client.New(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return url, c
}

// runOne is a test worker: it registers, leases one job, writes out,
// completes it with outcome and leaves. It returns what went wrong.
func runOne(ctx context.Context, c *client.Client, outcome string, out ...api.LogChunk) error {
	reg, err := c.Register(ctx, api.RegisterRequest{Name: "cli-test-host", Slots: 1, CPU: 2, MemoryMB: 1024})
	if err != nil {
		return err
	}
	defer c.Deregister(ctx, reg.WorkerID)
	leases, err := c.Lease(ctx, reg.WorkerID, 1, 20*time.Second)
	if err != nil || len(leases) != 1 {
		return fmt.Errorf("lease: %v, %d leases", err, len(leases))
	}
	l := leases[0]
	now := time.Now().UTC()
	if _, err := c.Start(ctx, reg.WorkerID, []api.JobAttempt{{JobID: l.Job.ID, Attempt: l.Attempt, StartedAt: &now}}); err != nil {
		return err
	}
	for i := range out {
		out[i].JobID, out[i].Attempt, out[i].At, out[i].Seq = l.Job.ID, l.Attempt, now, int64(i+1)
	}
	if _, err := c.AppendLogs(ctx, reg.WorkerID, out); err != nil {
		return err
	}
	done := api.Completion{JobID: l.Job.ID, Attempt: l.Attempt, Outcome: outcome, ExitCode: new(int)}
	if outcome != api.OutcomeSucceeded {
		*done.ExitCode, done.FailureClass, done.Error = 2, api.FailExitCode, "exit status 2"
	}
	res, err := c.Complete(ctx, reg.WorkerID, []api.Completion{done})
	if err != nil {
		return err
	}
	return client.ResultError(res[0])
}

func TestCLIServerSubmitWait(t *testing.T) {
	url, c := realServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := map[string]struct {
		outcome string
		code    int
		final   string
	}{
		"succeeds": {api.OutcomeSucceeded, exitOK, " succeeded (attempt 1, ran "},
		"fails":    {api.OutcomeFailed, exitJobFailed, " failed (attempt 1: exit code 2)\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			werr := make(chan error, 1)
			go func() {
				werr <- runOne(ctx, c, tc.outcome, api.LogChunk{Stream: "stdout", Data: "line 1\n"}, api.LogChunk{Stream: "stderr", Data: "note\n"})
			}()
			code, out, errOut := runCLI(t, url, "submit", "report", "--max-attempts", "1", "--wait", "--", "./report.sh")
			if err := <-werr; err != nil {
				t.Fatal(err)
			}
			if code != tc.code || out != "line 1\n" {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.HasPrefix(errOut, "fairway: job ") || !strings.Contains(errOut, " submitted: ") ||
				!strings.Contains(errOut, "note\n") || !strings.Contains(errOut, tc.final) {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
}

func TestCLIServerCommands(t *testing.T) {
	url, _ := realServer(t)
	code, out, errOut := runCLI(t, url, "submit", "report", "--priority", "100", "--", "echo", "hi")
	if code != 0 {
		t.Fatalf("submit: exit %d, %s", code, errOut)
	}
	id := strings.TrimSpace(out)

	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", id}, exitOK, "state:         pending"},
		{[]string{"status", "--json", id}, exitOK, `"id": "` + id + `"`},
		{[]string{"list", "--state", "pending"}, exitOK, id + "  pending  no_compatible_worker  report"},
		{[]string{"list", "--type", "other", "--json"}, exitOK, `"jobs": []`},
		{[]string{"explain", id}, exitOK, "reason:"},
		{[]string{"reprioritize", id, "900"}, exitOK, "job " + id + ": priority 900"},
		{[]string{"reprioritize", id, "2000"}, exitAPI, "[field priority]"},
		{[]string{"logs", id}, exitOK, ""},
		{[]string{"lanes"}, exitOK, "default"},
		{[]string{"workers", "--json"}, exitOK, `"workers": []`},
		{[]string{"cancel", id}, exitOK, "job " + id + ": cancelled"},
		{[]string{"cancel", id}, exitOK, "already finished (cancelled)"},
		{[]string{"logs", "-f", id}, exitOK, ""},
		{[]string{"status", "01NOSUCHJOB0000000000000000"}, exitNotFound, "fairway: get job 01NOSUCHJOB0000000000000000: not_found (404)"},
		{[]string{"cancel", "nope"}, exitNotFound, "not_found (404)"},
	}
	for _, s := range steps {
		code, out, errOut := runCLI(t, url, s.args[0], s.args[1:]...)
		if code != s.code || !strings.Contains(out+errOut, s.want) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q; want %q", s.args, code, s.code, out, errOut, s.want)
		}
	}
}
