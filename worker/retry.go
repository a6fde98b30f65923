package worker

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// errKind is what the worker does about a failed request.
type errKind int

const (
	errRetry errKind = iota // transient: back off and try again
	errGone                 // the server does not know this worker: register again
	errStale                // the attempt is no longer current: drop it
	errFatal                // retrying cannot help
)

// classify sorts a request error. Errors that are not API answers
// (network, timeouts) are transient, as are 408, 429 and 5xx answers.
func classify(err error) errKind {
	switch {
	case client.IsNotFound(err):
		return errGone
	case client.IsStaleAttempt(err):
		return errStale
	case client.IsRetryable(err):
		return errRetry
	}
	var ae *api.Error
	if !errors.As(err, &ae) {
		return errRetry
	}
	if ae.Status == 0 || ae.Status == 408 || ae.Status == 429 || ae.Status >= 500 {
		return errRetry
	}
	return errFatal
}

// itemKind classifies the error of one item of a start or complete answer.
func itemKind(e *api.ErrorBody) errKind {
	switch e.Code {
	case api.CodeStaleAttempt, api.CodeNotFound, api.CodeConflict:
		return errStale
	case api.CodeOverloaded, api.CodeInternal, api.CodeServerUnavailable, api.CodeDeadlineExceeded, api.CodeRateLimited:
		return errRetry
	}
	return errFatal
}

// backoff is capped exponential back-off with jitter.
type backoff struct{ min, max time.Duration }

// delay is the wait before retry number n (0-based): min·2ⁿ capped at max,
// jittered over its upper half, and at least what Retry-After asked for
// (itself capped at max).
func (b backoff) delay(n int, err error) time.Duration {
	d := b.min
	for i := 0; i < n && d < b.max; i++ {
		d *= 2
	}
	d = min(d, b.max)
	d = d/2 + rand.N(d/2+1)
	var ae *api.Error
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		d = max(d, min(time.Duration(ae.RetryAfter)*time.Second, b.max))
	}
	return d
}

// sleep waits d or until ctx is done, reporting whether it waited it all.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// retry calls fn until it succeeds, fails with an error that is not
// transient, or ctx is done; it returns fn's last error.
func (w *Worker) retry(ctx context.Context, what string, fn func() error) error {
	for n := 0; ; n++ {
		err := fn()
		if err == nil || classify(err) != errRetry || ctx.Err() != nil {
			return err
		}
		d := w.backoff.delay(n, err)
		w.log.Warn(what+" failed, retrying", "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return err
		}
	}
}
