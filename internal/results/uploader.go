package results

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Source is what the Uploader reads: the due uploads, their jobs and
// their output.
type Source interface {
	ExecutionResultsDue(ctx context.Context, now time.Time, limit int) ([]store.Execution, error)
	JobGet(ctx context.Context, id string) (store.Job, error)
	LogList(ctx context.Context, p store.LogListParams) ([]store.LogChunk, error)
}

// Recorder records one try of an upload on its execution, with an audit
// event for the job's tenant. store.ErrConflict means the try was recorded
// already (the Uploader goes on).
type Recorder interface {
	RecordResult(ctx context.Context, u store.ResultUpdate, tenant string) error
}

// Clock is the Uploader's source of now.
type Clock interface{ Now() time.Time }

// Options tunes an Uploader; zero values take the defaults.
type Options struct {
	MaxTries    int           // tries before an upload is recorded as failed (default 20)
	Backoff     time.Duration // wait after the first failed try, doubling (default 1s)
	MaxBackoff  time.Duration // the longest wait between tries (default 5m)
	Timeout     time.Duration // one try's limit (default 1m)
	Poll        time.Duration // how often the store is read without a Notify (default 1s)
	Concurrency int           // uploads in flight at once (default 4)
}

// Defaults.
const (
	DefaultMaxTries    = 20
	DefaultBackoff     = time.Second
	DefaultMaxBackoff  = 5 * time.Minute
	DefaultTimeout     = time.Minute
	DefaultPoll        = time.Second
	DefaultConcurrency = 4
)

func (o Options) withDefaults() Options {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.MaxTries <= 0 {
		o.MaxTries = DefaultMaxTries
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	def(&o.Backoff, DefaultBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.Timeout, DefaultTimeout)
	def(&o.Poll, DefaultPoll)
	return o
}

// Uploader writes pending results; see the package doc.
type Uploader struct {
	src   Source
	rec   Recorder
	clock Clock
	log   *slog.Logger
	opts  Options
	wake  chan struct{}
	open  *buckets
}

// New builds an Uploader.
func New(src Source, rec Recorder, clock Clock, log *slog.Logger, opts Options) *Uploader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Uploader{
		src: src, rec: rec, clock: clock, log: log, opts: opts.withDefaults(),
		wake: make(chan struct{}, 1), open: newBuckets(),
	}
}

// Notify wakes the Uploader: an upload may have become due.
func (u *Uploader) Notify() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// Run writes due uploads until ctx ends.
func (u *Uploader) Run(ctx context.Context) {
	defer u.open.closeAll()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-u.wake:
		}
		if full := u.Pass(ctx); full {
			u.Notify() // more may be due: go again at once
		}
		timer.Reset(u.opts.Poll)
	}
}

// passLimit bounds the uploads read in one pass.
const passLimit = 100

// Pass tries every upload due now, up to passLimit, and reports whether
// it found that many (more may be waiting).
func (u *Uploader) Pass(ctx context.Context) bool {
	due, err := u.src.ExecutionResultsDue(ctx, u.clock.Now(), passLimit)
	if err != nil {
		if ctx.Err() == nil {
			u.log.Error("results: read due uploads", "err", err)
		}
		return false
	}
	sem := make(chan struct{}, u.opts.Concurrency)
	var wg sync.WaitGroup
	for _, e := range due {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			u.try(ctx, e)
		}()
	}
	wg.Wait()
	return len(due) == passLimit
}

// try makes one try of an execution's upload and records it.
func (u *Uploader) try(ctx context.Context, e store.Execution) {
	job, err := u.src.JobGet(ctx, e.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return // deleted with its executions: nothing left to record on
	}
	if err != nil {
		u.log.Error("results: read job", "job", e.JobID, "err", err)
		return
	}
	tctx, cancel := context.WithTimeout(ctx, u.opts.Timeout)
	werr := u.write(tctx, job, e)
	cancel()
	if ctx.Err() != nil {
		return // stopping: the try is made again after the restart
	}
	upd := u.outcome(e, werr)
	if err := u.rec.RecordResult(ctx, upd, job.Tenant); err != nil && !errors.Is(err, store.ErrConflict) {
		u.log.Error("results: record a try", "job", e.JobID, "attempt", e.Attempt, "err", err)
		return
	}
	if werr != nil {
		u.log.Warn("results: write failed", "job", e.JobID, "attempt", e.Attempt, "tries", upd.Tries,
			"state", upd.State, "err", werr)
	}
}

// outcome is what a try that ended with err records.
func (u *Uploader) outcome(e store.Execution, err error) store.ResultUpdate {
	upd := store.ResultUpdate{JobID: e.JobID, Attempt: e.Attempt, Tries: e.ResultTries + 1, State: store.ResultWritten}
	if err == nil {
		return upd
	}
	upd.Error = err.Error()
	if upd.Tries >= u.opts.MaxTries {
		upd.State = store.ResultFailed
		return upd
	}
	upd.State, upd.NextAt = store.ResultPending, u.clock.Now().Add(RetryDelay(u.opts, upd.Tries))
	return upd
}

// RetryDelay is the wait after the tries-th failed try: Backoff doubled
// for each earlier failure, capped at MaxBackoff.
func RetryDelay(o Options, tries int) time.Duration {
	o = o.withDefaults()
	d := o.Backoff
	for i := 1; i < tries && d < o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.MaxBackoff)
}

// write puts an attempt's objects under its location.
func (u *Uploader) write(ctx context.Context, job store.Job, e store.Execution) error {
	loc, err := ParseLocation(job.ResultLocation)
	if err != nil {
		return err
	}
	b, release, err := u.open.get(ctx, loc)
	if err != nil {
		return fmt.Errorf("open %s: %w", loc, err)
	}
	defer release()
	return writeAttempt(ctx, b, loc.attemptDir(job.ID, e.Attempt), u.src, job, e)
}
