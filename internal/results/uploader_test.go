package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

var t0 = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

type fixedClock struct{ now time.Time }

func (c *fixedClock) Now() time.Time { return c.now }

// storeRecorder records tries straight into the store, as the dispatcher
// does without its events.
type storeRecorder struct {
	st    store.Store
	tries []store.ResultUpdate
}

func (r *storeRecorder) RecordResult(ctx context.Context, u store.ResultUpdate, _ string) error {
	r.tries = append(r.tries, u)
	return r.st.Write(ctx, func(w store.Writer) error { return w.ExecutionResultUpdate(ctx, u) })
}

type fixture struct {
	st    *sqlite.Store
	rec   *storeRecorder
	clock *fixedClock
	up    *Uploader
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, rec: &storeRecorder{st: st}, clock: &fixedClock{now: t0}}
	f.up = New(st, f.rec, f.clock, nil, opts)
	t.Cleanup(f.up.open.closeAll)
	return f
}

// ended stores a finished job whose attempt's upload is pending, with
// the given output chunks.
func (f *fixture) ended(t *testing.T, id, location string, chunks ...store.LogChunk) store.Execution {
	t.Helper()
	j := store.Job{ID: id, Tenant: "acme", Type: "report", Lane: "default", Priority: 500, State: store.StateSucceeded,
		Attempt: 1, MaxAttempts: 3, CreatedAt: t0, UpdatedAt: t0, FinishedAt: t0, ResultLocation: location,
		Result: []byte(`{"rows":42}`), Tags: []string{"nightly"}}
	e := store.Execution{JobID: id, Attempt: 1, WorkerID: "w1", LeasedAt: t0, StartedAt: t0, FinishedAt: t0.Add(3 * time.Second),
		Outcome: store.OutcomeSucceeded, ExitCode: store.Ptr(0), Duration: 3 * time.Second,
		ResultState: store.ResultPending, ResultNextAt: t0}
	err := f.st.Write(context.Background(), func(w store.Writer) error {
		if err := w.JobInsert(context.Background(), j); err != nil {
			return err
		}
		if err := w.LogAppend(context.Background(), chunks); err != nil && len(chunks) > 0 {
			return err
		}
		return w.ExecutionUpsert(context.Background(), e)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func chunk(id string, seq int64, stream store.Stream, data string) store.LogChunk {
	return store.LogChunk{JobID: id, Attempt: 1, Stream: stream, Seq: seq, At: t0, Data: []byte(data)}
}

func (f *fixture) execution(t *testing.T, id string) store.Execution {
	t.Helper()
	es, err := f.st.ExecutionList(context.Background(), store.ExecutionListParams{JobID: id})
	if err != nil || len(es) != 1 {
		t.Fatalf("executions of %s: %v, %v", id, es, err)
	}
	return es[0]
}

func TestUploaderWritesAnAttemptsOutputAndResult(t *testing.T) {
	f := newFixture(t, Options{})
	dir := filepath.Join(t.TempDir(), "results", "not-yet-made")
	f.ended(t, "job1", "file://"+dir,
		chunk("job1", 1, store.Stdout, "line 1\n"), chunk("job1", 2, store.Stderr, "warning\n"), chunk("job1", 3, store.Stdout, "line 2\n"))
	f.up.Pass(context.Background())

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, "job1", "attempt-1", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(StdoutObject); got != "line 1\nline 2\n" {
		t.Errorf("stdout.log = %q", got)
	}
	if got := read(StderrObject); got != "warning\n" {
		t.Errorf("stderr.log = %q", got)
	}
	var doc Document
	if err := json.Unmarshal([]byte(read(ResultObject)), &doc); err != nil {
		t.Fatal(err)
	}
	var result bytes.Buffer
	_ = json.Compact(&result, doc.Result)
	if doc.JobID != "job1" || doc.Outcome != "succeeded" || doc.StdoutBytes != 14 || doc.StderrBytes != 8 ||
		doc.DurationMS != 3000 || result.String() != `{"rows":42}` || *doc.ExitCode != 0 || doc.Tags[0] != "nightly" {
		t.Errorf("result.json = %+v", doc)
	}
	e := f.execution(t, "job1")
	if e.ResultState != store.ResultWritten || e.ResultTries != 1 || e.ResultError != "" {
		t.Errorf("execution after the upload: %+v", e)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "job1", "attempt-1"))
	if len(entries) != 3 {
		t.Errorf("the attempt's directory holds %d entries, want the 3 objects and nothing else", len(entries))
	}
	// Nothing is due any more: a second pass writes nothing.
	f.up.Pass(context.Background())
	if len(f.rec.tries) != 1 {
		t.Errorf("%d tries recorded, want 1", len(f.rec.tries))
	}
}

func TestUploaderPagesThroughLongOutput(t *testing.T) {
	f := newFixture(t, Options{})
	dir := t.TempDir()
	var chunks []store.LogChunk
	var want strings.Builder
	for i := range store.MaxLogLimit + 5 {
		line := fmt.Sprintf("%d\n", i)
		chunks = append(chunks, chunk("long", int64(i+1), store.Stdout, line))
		want.WriteString(line)
	}
	f.ended(t, "long", "file://"+dir, chunks...)
	f.up.Pass(context.Background())
	got, err := os.ReadFile(filepath.Join(dir, "long", "attempt-1", StdoutObject))
	if err != nil || string(got) != want.String() {
		t.Fatalf("stdout.log has %d bytes, want %d (%v)", len(got), want.Len(), err)
	}
}

func TestUploaderRetriesAFailedWriteThenGivesUp(t *testing.T) {
	f := newFixture(t, Options{MaxTries: 3, Backoff: time.Second, MaxBackoff: time.Minute})
	// A regular file where the directory should be: every write fails.
	blocker := filepath.Join(t.TempDir(), "blocker")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.ended(t, "doomed", "file://"+blocker+"/out", chunk("doomed", 1, store.Stdout, "hello\n"))

	f.up.Pass(context.Background())
	e := f.execution(t, "doomed")
	if e.ResultState != store.ResultPending || e.ResultTries != 1 || e.ResultError == "" || !e.ResultNextAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("after the first failed try: %+v", e)
	}
	f.up.Pass(context.Background()) // not due yet
	if len(f.rec.tries) != 1 {
		t.Fatalf("tried %d times before the retry was due", len(f.rec.tries))
	}
	f.clock.now = t0.Add(time.Second)
	f.up.Pass(context.Background())
	if e = f.execution(t, "doomed"); e.ResultTries != 2 || !e.ResultNextAt.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("after the second try: %+v", e)
	}
	f.clock.now = t0.Add(time.Hour)
	f.up.Pass(context.Background())
	e = f.execution(t, "doomed")
	if e.ResultState != store.ResultFailed || e.ResultTries != 3 || !strings.Contains(e.ResultError, "blocker") {
		t.Fatalf("after the last try: %+v", e)
	}
	f.up.Pass(context.Background())
	if len(f.rec.tries) != 3 {
		t.Errorf("%d tries, want 3 and then none", len(f.rec.tries))
	}
}

func TestUploaderSkipsADeletedJob(t *testing.T) {
	f := newFixture(t, Options{})
	st := &missingJobs{Source: f.st}
	up := New(st, f.rec, f.clock, nil, Options{})
	f.ended(t, "gone", "file://"+t.TempDir())
	up.Pass(context.Background())
	if len(f.rec.tries) != 0 {
		t.Errorf("recorded %d tries for a job that is gone", len(f.rec.tries))
	}
}

// missingJobs is a Source whose jobs were all deleted between the due
// list and the read.
type missingJobs struct{ Source }

func (missingJobs) JobGet(context.Context, string) (store.Job, error) {
	return store.Job{}, store.ErrNotFound
}
