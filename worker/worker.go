package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the last steps of a shutdown.
const (
	defaultKillWait  = 15 * time.Second // cancelled jobs' handlers to return
	defaultFlushWait = 10 * time.Second // completions and output to be delivered
	deregisterWait   = 5 * time.Second
)

// Worker is a pull worker: it registers with a fairway server, leases jobs,
// runs them with its handlers and reports them. Create it with New and
// start it with Run.
type Worker struct {
	opts      Options
	client    Transport // Options.Client or Options.Transport
	log       *slog.Logger
	backoff   backoff
	killWait  time.Duration
	flushWait time.Duration

	slots     *slotPool
	leaseCtx  context.Context // done once the worker takes no more jobs
	reporting atomic.Int32    // completion reports in flight
	completes *queue
	logs      *logShipper

	mu      sync.Mutex
	sess    sessionState
	held    map[taskKey]*task // attempts leased and not yet acknowledged or dropped
	running int               // attempts whose handler has not returned
	unacked int               // completions queued and not yet acknowledged
	notify  chan struct{}     // closed and replaced when running/unacked change
	failErr error

	bg      sync.WaitGroup  // the loops
	netCtx  context.Context // server requests; cancelled once the worker is done
	jobsCtx context.Context // parent of the handlers' contexts

	runOnce   atomic.Bool
	stopOnce  sync.Once
	stopCh    chan struct{}
	abortCh   chan struct{} // closed by Abort: the drain ends now
	abortOnce sync.Once
	stopCtx   context.Context // bounds the drain; set before stopCh is closed
	failOnce  sync.Once
	failCh    chan struct{}
	done      chan struct{}
	stopErr   error // set before done is closed
}

// New returns a worker configured by opts.
func New(opts Options) (*Worker, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	w := &Worker{
		opts:      opts,
		client:    opts.transport(),
		log:       opts.Logger,
		backoff:   backoff{min: opts.MinBackoff, max: opts.MaxBackoff},
		killWait:  defaultKillWait,
		flushWait: defaultFlushWait,
		slots:     newSlotPool(opts.Slots),
		completes: newBulkQueue(bulkReport),
		logs:      newLogShipper(),
		held:      map[taskKey]*task{},
		notify:    make(chan struct{}),
		stopCh:    make(chan struct{}),
		abortCh:   make(chan struct{}),
		failCh:    make(chan struct{}),
		done:      make(chan struct{}),
	}
	// A saturated worker ends the completion report's batching window
	// (completeLoop), which waits on the worker's counters.
	w.slots.onWait = func() {
		w.mu.Lock()
		w.broadcastLocked()
		w.mu.Unlock()
	}
	return w, nil
}

// ID returns the worker's current identity on the server, "" when it is
// not registered.
func (w *Worker) ID() string { return w.currentSession().id }

// Run registers the worker and runs jobs until ctx is done or Stop is
// called, then stops gracefully: it leases no more, lets running jobs end
// (for up to Options.DrainTimeout after ctx is done, or until Stop's ctx
// is done), cancels the rest and hands them back, delivers the reports and
// deregisters. It returns nil after a graceful stop, or the error that
// made the worker stop (a registration or lease the server refused).
func (w *Worker) Run(ctx context.Context) error {
	if !w.runOnce.CompareAndSwap(false, true) {
		return errors.New("worker: Run called twice")
	}
	defer close(w.done)
	select {
	case <-w.stopCh:
		return nil
	default:
	}
	base := context.WithoutCancel(ctx)
	netCtx, cancelNet := context.WithCancel(base)
	defer cancelNet()
	w.netCtx, w.jobsCtx = netCtx, base
	if !w.registerFirst(ctx) {
		return w.fatalError()
	}
	pollCtx, stopPolling := context.WithCancel(netCtx)
	w.leaseCtx = pollCtx
	hbCtx, stopHeartbeats := context.WithCancel(netCtx)
	var polls sync.WaitGroup
	w.startLoops(pollCtx, hbCtx, &polls)
	drainCtx, cancelDrain := w.awaitStop(ctx)
	defer cancelDrain()
	stopPolling()
	polls.Wait()
	w.stopErr = w.shutdown(drainCtx, stopHeartbeats)
	cancelNet()
	w.bg.Wait()
	return w.fatalError()
}

// registerFirst registers, retrying transient failures until the worker
// is stopped. It reports whether the worker is registered.
func (w *Worker) registerFirst(ctx context.Context) bool {
	regCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-w.stopCh:
			cancel()
		case <-regCtx.Done():
		}
	}()
	sess, err := w.register(regCtx)
	if err != nil {
		if regCtx.Err() == nil {
			w.fail(fmt.Errorf("register: %w", err))
		}
		return false
	}
	w.mu.Lock()
	w.setSessionLocked(sess)
	w.mu.Unlock()
	return true
}

func (w *Worker) startLoops(pollCtx, hbCtx context.Context, polls *sync.WaitGroup) {
	polls.Go(func() { w.pollLoop(pollCtx) })
	w.bg.Go(func() { w.heartbeatLoop(hbCtx) })
	w.bg.Go(func() { w.completeLoop(w.netCtx) })
	for range reportsInFlight - 1 {
		w.bg.Go(func() { w.bulkCompleteLoop(w.netCtx) })
	}
	w.bg.Go(func() { w.logLoop(w.netCtx) })
}

// awaitStop waits for a reason to stop and returns the context bounding
// the drain of running jobs.
func (w *Worker) awaitStop(ctx context.Context) (context.Context, context.CancelFunc) {
	var drain context.Context
	var timeout time.Duration
	select {
	case <-ctx.Done():
		drain, timeout = context.Background(), w.opts.DrainTimeout
	case <-w.failCh:
		drain, timeout = context.Background(), w.opts.DrainTimeout
	case <-w.stopCh:
		drain = w.stopCtx
	}
	if timeout > 0 {
		var stop context.CancelFunc
		drain, stop = context.WithTimeoutCause(drain, timeout, fmt.Errorf("drain timeout (%s) reached", timeout))
		drainCtx, cancel := context.WithCancelCause(drain)
		go w.abortOn(drainCtx, cancel)
		return drainCtx, func() { cancel(nil); stop() }
	}
	drainCtx, cancel := context.WithCancelCause(drain)
	go w.abortOn(drainCtx, cancel)
	return drainCtx, func() { cancel(nil) }
}

// abortOn cancels the drain when Abort is called before it ends.
func (w *Worker) abortOn(drainCtx context.Context, cancel context.CancelCauseFunc) {
	select {
	case <-w.abortCh:
		cancel(errAborted)
	case <-drainCtx.Done():
	}
}

// errAborted is the drain's end by Abort.
var errAborted = errors.New("stop forced (Abort)")

// Abort ends a graceful stop's drain now: the running jobs are cancelled
// (their processes killed) and handed back to the server without being
// charged an attempt, and the worker deregisters. It is for the second
// Ctrl-C: Run must have been asked to stop (its ctx done, or Stop), or be
// asked later, for Abort to take effect.
func (w *Worker) Abort() {
	w.abortOnce.Do(func() { close(w.abortCh) })
}

// Stop stops the worker gracefully (see Run), bounding the wait for running
// jobs by ctx, and returns once Run has finished. It returns an error if
// jobs had to be cancelled. Stop before Run makes Run return at once.
func (w *Worker) Stop(ctx context.Context) error {
	w.stopOnce.Do(func() {
		w.stopCtx = ctx
		close(w.stopCh)
	})
	if !w.runOnce.Load() {
		return nil
	}
	<-w.done
	return w.stopErr
}

// fail records the error that stops the worker; the first one wins.
func (w *Worker) fail(err error) {
	w.failOnce.Do(func() {
		w.log.Error("worker stopping", "err", err)
		w.mu.Lock()
		w.failErr = fmt.Errorf("worker: %w", err)
		w.mu.Unlock()
		close(w.failCh)
	})
}

// call bounds one request by Options.RequestTimeout.
func (w *Worker) call(ctx context.Context, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, w.opts.RequestTimeout)
	defer cancel()
	return fn(ctx)
}

func (w *Worker) fatalError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failErr
}
