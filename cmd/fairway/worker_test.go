package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func TestWorkerFlagErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"help":          {[]string{"-h"}, 0, "--drain-timeout"},
		"no slots":      {[]string{"--slots", "0"}, 2, "--slots: must be at least 1"},
		"argument":      {[]string{"extra"}, 2, `unexpected argument "extra"`},
		"bad level":     {[]string{"--log-level", "loud"}, 2, "--log-level"},
		"bad drain":     {[]string{"--drain-timeout", "0s"}, 2, "--drain-timeout"},
		"bad server":    {[]string{"--server", "ftp://x"}, 2, "--server"},
		"unknown flag":  {[]string{"--nope"}, 2, "unknown flag --"},
		"negative cpus": {[]string{"--cpu", "-1"}, 2, "must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, stderr := runCmd(t, append([]string{"worker"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

func TestWorkerSplitList(t *testing.T) {
	if got := splitList(" pdf, ,excel,"); strings.Join(got, "|") != "pdf|excel" {
		t.Errorf("splitList = %q", got)
	}
	if got := splitList(""); got != nil {
		t.Errorf("splitList(\"\") = %q, want nil (every type)", got)
	}
}

// syncBuffer is a bytes.Buffer safe for the worker's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWorkerRunsJobsAndStopsGracefully(t *testing.T) {
	url, c := realServer(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stdout, stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"worker", "--server", url, "--name", "cli-worker", "--slots", "2", "--types", "sh"}, &stdout, &stderr)
	}()
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := c.Submit(wctx, api.JobSpec{Type: "sh", Command: []string{"/bin/sh", "-c", "echo hi; echo oops >&2"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := c.Wait(wctx, sub.Job.ID)
	if err != nil || j.State != api.StateSucceeded {
		t.Fatalf("job = %+v, %v; want succeeded (worker log:\n%s)", j, err, stderr.String())
	}
	var logs strings.Builder
	err = c.LogsAll(wctx, j.ID, client.LogOptions{}, func(ch api.LogChunk) error {
		logs.WriteString(ch.Stream + ":" + ch.Data)
		return nil
	})
	if err != nil || logs.String() != "stdout:hi\nstderr:oops\n" && logs.String() != "stderr:oops\nstdout:hi\n" {
		t.Errorf("logs = %q, %v", logs.String(), err)
	}
	stop() // what SIGTERM does through main's signal.NotifyContext
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d, want 0; log:\n%s", code, stderr.String())
		}
	case <-wctx.Done():
		t.Fatalf("the worker did not stop; log:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "deregistered") {
		t.Errorf("no deregistration in the log:\n%s", stderr.String())
	}
	workers, err := c.Workers(wctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range workers {
		if w.Name == "cli-worker" && w.State != "gone" {
			t.Errorf("worker %s is %s after exit", w.ID, w.State)
		}
	}
}

func TestWorkerExitsOnRefusedRegistration(t *testing.T) {
	url, _ := realServer(t)
	code, _, stderr := runCmd(t, "worker", "--server", url, "--slots", "200000")
	if code != 1 || !strings.Contains(stderr, "slots") {
		t.Errorf("exit %d, stderr %q; want 1 naming slots", code, stderr)
	}
}
