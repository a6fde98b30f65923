package results

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"gocloud.dev/blob"

	"github.com/fairwayhq/fairway/internal/store"
)

// Object names under an attempt's directory.
const (
	StdoutObject = "stdout.log"
	StderrObject = "stderr.log"
	ResultObject = "result.json"
)

// Document is result.json: what an attempt was and how it ended.
type Document struct {
	JobID        string          `json:"job_id"`
	Attempt      int             `json:"attempt"`
	Type         string          `json:"type"`
	Tenant       string          `json:"tenant"`
	Name         string          `json:"name,omitempty"`
	Lane         string          `json:"lane"`
	Tags         []string        `json:"tags,omitempty"`
	ScheduleID   string          `json:"schedule_id,omitempty"`
	ScheduledFor *time.Time      `json:"scheduled_for,omitempty"`
	WorkerID     string          `json:"worker_id,omitempty"`
	Outcome      string          `json:"outcome"`
	ExitCode     *int            `json:"exit_code,omitempty"`
	FailureClass string          `json:"failure_class,omitempty"`
	Error        string          `json:"error,omitempty"`
	StartedAt    *time.Time      `json:"started_at,omitempty"`
	FinishedAt   *time.Time      `json:"finished_at,omitempty"`
	DurationMS   int64           `json:"duration_ms"`
	StdoutBytes  int64           `json:"stdout_bytes"`
	StderrBytes  int64           `json:"stderr_bytes"`
	Result       json.RawMessage `json:"result,omitempty"` // the handler's result, on the job's final attempt
}

// writeAttempt writes stdout.log, stderr.log and then result.json under dir.
func writeAttempt(ctx context.Context, b *blob.Bucket, dir string, src Source, job store.Job, e store.Execution) error {
	doc := document(job, e)
	var err error
	if doc.StdoutBytes, err = writeStream(ctx, b, dir+StdoutObject, src, e, store.Stdout); err != nil {
		return err
	}
	if doc.StderrBytes, err = writeStream(ctx, b, dir+StderrObject, src, e, store.Stderr); err != nil {
		return err
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ResultObject, err)
	}
	if err := b.WriteAll(ctx, dir+ResultObject, append(body, '\n'), &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write %s: %w", ResultObject, err)
	}
	return nil
}

// writeStream copies one stream of the attempt's output into key and
// returns its size.
func writeStream(ctx context.Context, b *blob.Bucket, key string, src Source, e store.Execution, stream store.Stream) (int64, error) {
	w, err := b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: "text/plain; charset=utf-8"})
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	n, err := copyStream(ctx, w, src, e, stream)
	if err != nil {
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	return n, nil
}

// copyStream pages through the stored chunks of one stream.
func copyStream(ctx context.Context, w io.Writer, src Source, e store.Execution, stream store.Stream) (int64, error) {
	var n int64
	p := store.LogListParams{JobID: e.JobID, Attempt: e.Attempt, Stream: stream, Limit: store.MaxLogLimit}
	for {
		chunks, err := src.LogList(ctx, p)
		if err != nil {
			return n, fmt.Errorf("read %s of %s/%d: %w", stream, e.JobID, e.Attempt, err)
		}
		for _, c := range chunks {
			m, err := w.Write(c.Data)
			n += int64(m)
			if err != nil {
				return n, fmt.Errorf("write %s: %w", stream, err)
			}
		}
		if len(chunks) < p.Limit {
			return n, nil
		}
		p.AfterSeq = chunks[len(chunks)-1].Seq
	}
}

func document(job store.Job, e store.Execution) Document {
	d := Document{
		JobID: job.ID, Attempt: e.Attempt, Type: job.Type, Tenant: job.Tenant, Name: job.Name, Lane: job.Lane,
		Tags: job.Tags, ScheduleID: job.ScheduleID, ScheduledFor: timePtr(job.ScheduledFor), WorkerID: e.WorkerID,
		Outcome: string(e.Outcome), ExitCode: e.ExitCode, FailureClass: string(e.FailureClass), Error: e.Error,
		StartedAt: timePtr(e.StartedAt), FinishedAt: timePtr(e.FinishedAt), DurationMS: e.Duration.Milliseconds(),
	}
	if e.Attempt == job.Attempt && job.State.Terminal() && len(job.Result) > 0 && json.Valid(job.Result) {
		d.Result = job.Result
	}
	return d
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
