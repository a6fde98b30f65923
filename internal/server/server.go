package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/alerts"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/dispatch"
	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/results"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// Clock is the server's source of now; tests inject one.
type Clock = dispatch.Clock

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Options configures a Server.
type Options struct {
	Store  store.Store
	Config config.Config
	Logger *slog.Logger
	Clock  Clock
	// MaxBatch bounds the commands applied in one transaction (default 4096).
	MaxBatch int
	// ReadOnly serves reads from the store only (a standby among several
	// instances): Start must not be called; a list or a job carries no
	// reason (the dispatcher that knows it runs on the leader).
	ReadOnly bool
	// Tracer writes the spans of jobs (nil: tracing off; see package
	// tracing).
	Tracer *tracing.Tracer
}

// Server is a running job server.
type Server struct {
	st     store.Store
	cfg    config.Config
	log    *slog.Logger
	clock  Clock
	d      *dispatch.Dispatcher
	auth   *authenticator
	limits *limiter
	mux    http.Handler

	uploader    *results.Uploader
	resultAllow []results.Location // server.results.allow, parsed
	readOnly    bool
	// betweenEventReads, if set (tests), runs between the two reads of
	// the merged audit feed (listEvents).
	betweenEventReads atomic.Pointer[func()]
	tracer            *tracing.Tracer // nil: off

	ready     atomic.Bool
	startOnce sync.Once
	stopOnce  sync.Once
	cancel    context.CancelFunc
	done      <-chan struct{} // closed once the dispatcher has stopped
	metrics   *metrics.Metrics
	alerts    *alerts.Alerter // nil: no webhooks
	services  sync.WaitGroup  // background services (the result uploader)
}

// ErrClosed is returned to requests that arrive after Close.
var ErrClosed = dispatch.ErrClosed

// New builds a server; Start runs its dispatcher.
func New(opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: Options.Store is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 4096
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{
		st: opts.Store, cfg: opts.Config, log: opts.Logger, clock: opts.Clock, readOnly: opts.ReadOnly,
		tracer: opts.Tracer,
		auth:   newAuthenticator(opts.Config),
		limits: newLimiter(opts.Config),
	}
	for i, raw := range opts.Config.Server.Results.Allow {
		loc, err := results.ParseLocation(raw)
		if err != nil {
			return nil, fmt.Errorf("server: server.results.allow[%d]: %w", i, err)
		}
		s.resultAllow = append(s.resultAllow, loc)
	}
	s.auth.stored, s.auth.now = opts.Store.APIKeyGet, opts.Clock.Now
	s.metrics = metrics.New(s.metricsSnapshot)
	if !opts.ReadOnly {
		s.alerts = alerts.New(opts.Config.Alerts, s.recordAlert, opts.Logger)
	}
	var uploader *results.Uploader
	d, err := dispatch.New(dispatch.Options{
		Store: opts.Store, Config: opts.Config, Logger: opts.Logger, Clock: opts.Clock, MaxBatch: opts.MaxBatch,
		BuildJob: s.buildScheduledJob, ResultsPending: func() { uploader.Notify() }, Metrics: s.metrics, Alerts: s.alerts,
		Tracer: opts.Tracer,
	})
	if err != nil {
		return nil, err
	}
	uploader = results.New(opts.Store, d, opts.Clock, opts.Logger, results.Options{
		MaxTries: opts.Config.Server.Results.MaxTries, Timeout: opts.Config.Server.Results.Timeout.D(),
	})
	s.d, s.done, s.uploader = d, d.Done(), uploader
	s.mux = s.routes()
	return s, nil
}

// recordAlert writes an alert's delivery outcome to the audit trail.
func (s *Server) recordAlert(o alerts.Outcome) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.d.RecordAlert(ctx, o); err != nil {
		s.log.Warn("alerts: the outcome of a delivery could not be recorded", "webhook", o.Alert.Webhook, "kind", o.Alert.Kind, "err", err)
	}
}

// metricsSnapshot is the dispatcher's state for the gauges of /metrics;
// none while it does not run (a standby's read-only server, or stopping).
func (s *Server) metricsSnapshot() (metrics.Snapshot, bool) {
	if s.readOnly || !s.ready.Load() {
		return metrics.Snapshot{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.d.MetricsSnapshot(ctx)
}

// Start rebuilds the scheduling state from the store and runs the
// dispatcher until Close or ctx ends.
func (s *Server) Start(ctx context.Context) error {
	var err error
	s.startOnce.Do(func() {
		if err = s.d.Rebuild(ctx); err != nil {
			return
		}
		if err = s.loadWebhooks(ctx); err != nil {
			return
		}
		ctx, s.cancel = context.WithCancel(ctx)
		s.ready.Store(true)
		go s.d.Run(ctx)
		s.services.Add(2)
		go func() {
			defer s.services.Done()
			s.uploader.Run(ctx)
		}()
		go func() {
			defer s.services.Done()
			s.alerts.Run(ctx)
		}()
	})
	return err
}

// Close stops the dispatcher; requests in flight get ErrClosed. The store
// is the caller's to close.
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		if s.cancel == nil {
			s.d.Stop()
			return
		}
		s.cancel()
		s.services.Wait()
		<-s.done
	})
	return nil
}

// buildScheduledJob resolves a schedule's template as a submit would.
func (s *Server) buildScheduledJob(spec api.JobSpec, tenant string) (store.Job, error) {
	j, fe := s.buildJob(spec, tenant)
	if fe != nil {
		return j, &dispatch.FieldError{Field: fe.field, Msg: fe.msg}
	}
	if s.tracer.Enabled() {
		tp, end := s.tracer.Submit(context.Background(), j.TraceParent, tenant, 1)
		j.TraceParent = tp
		end("", nil)
	}
	return j, nil
}

// Handler is the HTTP API.
func (s *Server) Handler() http.Handler { return s.mux }
