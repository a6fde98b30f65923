package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/results"
)

const resultsConfig = `
server:
  allow_unknown_types: true
types:
  report:
    allow_shell: true
`

// resultExecution waits until the job's attempt has its result upload in
// state and returns the execution.
func resultExecution(t *testing.T, cl *cluster, id string, attempt int, state string) api.Execution {
	t.Helper()
	var got api.Execution
	eventually(t, 20*time.Second, "result of "+id+" "+state, func() bool {
		list, err := cl.c.Executions(context.Background(), id)
		if err != nil {
			return false
		}
		for _, e := range list {
			if e.Attempt == attempt && e.ResultState == state {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

// A real worker runs a real command; its output and result.json land in
// the job's file:// result location; a failing location is retried after
// the server is SIGKILLed and restarted, and written once it is usable.
func TestResultLocationFileEndToEnd(t *testing.T) {
	cl := newCluster(t, resultsConfig)
	cl.worker("w1", "--allow-shell")
	out := filepath.Join(t.TempDir(), "results")
	job := cl.submit(api.JobSpec{Type: "report", Shell: true, ResultLocation: "file://" + out,
		Command: []string{"echo rows=42; echo 'slow query' >&2"}})
	if j := cl.wait(job.ID, 30*time.Second); j.State != api.StateSucceeded {
		t.Fatalf("job ended %s", j.State)
	}
	e := resultExecution(t, cl, job.ID, 1, "written")
	dir := filepath.Join(out, job.ID, "attempt-1")
	if e.ResultURL != "file://"+dir+"/" {
		t.Errorf("result_url %q, want file://%s/", e.ResultURL, dir)
	}
	read := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(dir, results.StdoutObject); got != "rows=42\n" {
		t.Errorf("stdout.log = %q", got)
	}
	if got := read(dir, results.StderrObject); got != "slow query\n" {
		t.Errorf("stderr.log = %q", got)
	}
	var doc results.Document
	if err := json.Unmarshal([]byte(read(dir, results.ResultObject)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.JobID != job.ID || doc.Outcome != "succeeded" || doc.ExitCode == nil || *doc.ExitCode != 0 || doc.WorkerID == "" {
		t.Errorf("result.json: %+v", doc)
	}

	// A location that cannot be written: the try fails and is recorded.
	blocked := filepath.Join(t.TempDir(), "blocked")
	if err := os.WriteFile(blocked, []byte("a file where the directory goes"), 0o600); err != nil {
		t.Fatal(err)
	}
	late := cl.submit(api.JobSpec{Type: "report", Shell: true, ResultLocation: "file://" + blocked,
		Command: []string{"echo late"}})
	cl.wait(late.ID, 30*time.Second)
	eventually(t, 20*time.Second, "a failed try recorded", func() bool {
		list, err := cl.c.Executions(context.Background(), late.ID)
		return err == nil && len(list) == 1 && list[0].ResultTries >= 1 &&
			list[0].ResultState == "pending" && strings.Contains(list[0].ResultError, "blocked")
	})
	// The server dies; the obstacle goes; the restarted server writes it.
	cl.server.kill()
	if err := os.Remove(blocked); err != nil {
		t.Fatal(err)
	}
	cl.startServer()
	e = resultExecution(t, cl, late.ID, 1, "written")
	if got := read(filepath.Join(blocked, late.ID, "attempt-1"), results.StdoutObject); got != "late\n" {
		t.Errorf("stdout.log after the restart = %q", got)
	}
	if e.ResultTries < 2 || e.ResultError != "" {
		t.Errorf("written after a failed try: %+v", e)
	}
	types := eventTypes(t, cl, late.ID)
	if !contains(types, "result_write_failed") || !contains(types, "result_written") {
		t.Errorf("events: %v", types)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// s3:// works with no code of ours beyond the URL: the server process
// writes through gocloud.dev's s3blob (AWS SDK v2, credentials from its
// environment) to an S3 API on loopback (gofakes3, in this process).
func TestResultLocationS3EndToEnd(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("reports"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	defer s3.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	cl := newCluster(t, resultsConfig)
	cl.worker("w1", "--allow-shell")
	loc := "s3://reports/nightly?region=us-east-1&use_path_style=true&endpoint=" + s3.URL
	job := cl.submit(api.JobSpec{Type: "report", Shell: true, ResultLocation: loc, Command: []string{"echo from s3"}})
	cl.wait(job.ID, 30*time.Second)
	e := resultExecution(t, cl, job.ID, 1, "written")
	if want := "s3://reports/nightly/" + job.ID + "/attempt-1/"; e.ResultURL != want {
		t.Errorf("result_url %q, want %q", e.ResultURL, want)
	}
	get := func(key string) string {
		obj, err := backend.GetObject("reports", key, nil)
		if err != nil {
			t.Fatalf("object %s: %v", key, err)
		}
		defer obj.Contents.Close()
		b, _ := io.ReadAll(obj.Contents)
		return string(b)
	}
	prefix := "nightly/" + job.ID + "/attempt-1/"
	if got := get(prefix + results.StdoutObject); got != "from s3\n" {
		t.Errorf("stdout.log = %q", got)
	}
	var doc results.Document
	if err := json.Unmarshal([]byte(get(prefix+results.ResultObject)), &doc); err != nil || doc.Outcome != "succeeded" {
		t.Errorf("result.json: %+v (%v)", doc, err)
	}
}
