package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/instance"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/worker"
)

// Options configure Open.
type Options struct {
	// Store is where the state is kept: a data directory for SQLite (the
	// database is DIR/fairway.db, as `fairway server --data DIR` keeps
	// it; one process at a time), or a postgres:// URL (several processes
	// may share it: one leads). Required.
	Store string
	// Config is the server's YAML configuration (lanes, tiers, types,
	// tenants, server.lease_ttl, ...), as `fairway server --config` reads
	// it; empty: the built-in defaults. Its store and listen address are
	// Store and HTTPAddr.
	Config []byte
	// HTTPAddr, if set, serves the HTTP API and the web UI on it (e.g.
	// "127.0.0.1:7070", or ":0" for a port the system picks: see Addr),
	// so that the CLI, other programs and `fairway worker`s can join. On
	// PostgreSQL with several processes, give each one: a process that
	// does not lead forwards its calls to the leader there.
	HTTPAddr string
	// Advertise is the address other processes reach this one's HTTPAddr
	// at, when it differs (HTTPAddr ":7070" on a host named in DNS).
	Advertise string
	// APIKey is the key this process presents when it goes through the
	// HTTP API: Client's calls and, on PostgreSQL, the calls a process
	// that does not lead forwards to the leader. Required when Config
	// has API keys: one of its admin keys (a worker key is enough for
	// workers alone, but Client then cannot submit or read). In-process
	// calls to the dispatcher act as the admin without one.
	APIKey string
	// Logger receives the server's log; default: none.
	Logger *slog.Logger
}

// Embedded is fairway running in this process: the store, the dispatcher
// (and on PostgreSQL the leadership), the in-process worker transport
// and, if asked, the HTTP API. Create it with Open; Close it.
type Embedded struct {
	inst   *instance.Instance
	tr     *transport
	remote *client.Client
	log    *slog.Logger

	hs     *http.Server
	ln     net.Listener
	served chan struct{}

	mu      sync.Mutex
	workers []*worker.Worker // made by NewWorker, stopped by Close
	closed  bool
}

// Open opens the store and starts fairway in this process. On SQLite it
// is ready when Open returns; on PostgreSQL it campaigns for the
// leadership (WaitLeader waits for a leader, here or in another process).
// ctx bounds the opening only.
func Open(ctx context.Context, opts Options) (*Embedded, error) {
	cfg, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Embedded{log: log}
	var inner net.Listener
	if opts.HTTPAddr != "" {
		if inner, err = net.Listen("tcp", opts.HTTPAddr); err != nil {
			return nil, fmt.Errorf("embedded: Options.HTTPAddr: %w", err)
		}
	}
	advertise := opts.Advertise
	if advertise == "" && inner != nil {
		advertise = inner.Addr().String()
	}
	inst, err := instance.Open(ctx, instance.Options{Config: cfg, Logger: log, Advertise: advertise})
	if err != nil {
		if inner != nil {
			_ = inner.Close()
		}
		return nil, fmt.Errorf("embedded: %w", err)
	}
	e.inst = inst
	hc := &http.Client{Transport: handlerTransport{h: inst.Handler()}}
	if e.remote, err = client.New("http://fairway.embedded", client.WithHTTPClient(hc), client.WithUserAgent("fairway-embedded/1"),
		client.WithAPIKey(opts.APIKey)); err != nil {
		_ = inst.Close()
		return nil, err
	}
	e.tr = &transport{inst: inst, remote: e.remote}
	if inner != nil {
		e.serve(cfg.Server, inner)
	}
	return e, nil
}

// loadConfig is the server configuration of opts.
func loadConfig(opts Options) (config.Config, error) {
	cfg := config.Default()
	if len(opts.Config) > 0 {
		var err error
		if cfg, err = config.Load(bytes.NewReader(opts.Config)); err != nil {
			return cfg, fmt.Errorf("embedded: Options.Config: %w", err)
		}
	}
	switch {
	case !cfg.Open() && opts.APIKey == "":
		return cfg, errors.New("embedded: Options.Config has API keys: set Options.APIKey to one of its admin keys " +
			"(Client and, on PostgreSQL, the calls forwarded to the leader present it)")
	case opts.Store == "":
		return cfg, errors.New("embedded: Options.Store is required: a data directory for SQLite, or a postgres:// URL")
	case postgres.IsURL(opts.Store):
		cfg.Server.Store = opts.Store
	default:
		cfg.Server.Store, cfg.Server.DataDir = "", opts.Store
	}
	return cfg, nil
}

// serve serves the HTTP API and UI on inner, with `fairway server`'s limits.
func (e *Embedded) serve(cfg config.Server, inner net.Listener) {
	e.hs, e.ln = instance.HTTPServer(cfg, inner, e.inst.Handler(), e.log)
	e.served = make(chan struct{})
	go func() {
		defer close(e.served)
		if err := e.hs.Serve(e.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("embedded: HTTP server stopped", "err", err)
		}
	}()
}

// Addr is the address the HTTP API listens on, "" without HTTPAddr.
func (e *Embedded) Addr() string {
	if e.ln == nil {
		return ""
	}
	return e.ln.Addr().String()
}

// Transport is the in-process worker transport, for worker.Options.
// While this process leads (always, on SQLite) its calls go to the
// dispatcher directly; otherwise they are forwarded to the leader over
// HTTP.
func (e *Embedded) Transport() worker.Transport { return e.tr }

// Client is the whole HTTP API (get, list, events, logs, cancel, ...)
// served in this process without a socket: it is the instance's own
// handler, which forwards to the leader what a standby does not answer.
func (e *Embedded) Client() *client.Client { return e.remote }

// NewWorker returns a worker that runs its handlers in this process
// through Transport (opts.Client and opts.Transport must be unset). Run
// it with its Run; Close stops it if it still runs.
func (e *Embedded) NewWorker(opts worker.Options) (*worker.Worker, error) {
	if opts.Client != nil || opts.Transport != nil {
		return nil, errors.New("embedded: NewWorker sets the worker's transport: leave Options.Client and Options.Transport unset")
	}
	opts.Transport = e.tr
	if opts.Logger == nil {
		opts.Logger = e.log
	}
	w, err := worker.New(opts)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errors.New("embedded: closed")
	}
	e.workers = append(e.workers, w)
	return w, nil
}

// Submit submits one job, validated as POST /jobs validates it. It
// returns once the job is durable.
func (e *Embedded) Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error) {
	out, err := e.SubmitBatch(ctx, []api.JobSpec{spec})
	if err != nil {
		return api.SubmitResponse{}, err
	}
	return out.Jobs[0], nil
}

// SubmitBatch submits up to 1000 jobs in one transaction, all or none,
// validated as POST /jobs/batch validates them. It returns once they are
// durable. While this process does not lead, it goes to the leader over
// HTTP with an idempotency key per job (client.SubmitBatch).
func (e *Embedded) SubmitBatch(ctx context.Context, specs []api.JobSpec) (api.BatchResponse, error) {
	if l, callCtx, release, ok := e.inst.Leading(ctx); ok {
		defer release()
		res, err := l.Submit(callCtx, specs)
		return api.BatchResponse{Jobs: res}, err
	}
	if len(specs) == 1 {
		res, err := e.remote.Submit(ctx, specs[0])
		return api.BatchResponse{Jobs: []api.SubmitResponse{res}}, err
	}
	return e.remote.SubmitBatch(ctx, specs)
}

// Lanes is every lane's load (pending, running, ...), as GET /lanes.
func (e *Embedded) Lanes(ctx context.Context) (api.LaneList, error) {
	if l, callCtx, release, ok := e.inst.Leading(ctx); ok {
		defer release()
		return l.Lanes(callCtx)
	}
	return e.remote.Lanes(ctx)
}

// Leading reports whether this process leads now (always true on SQLite).
func (e *Embedded) Leading() bool {
	_, _, release, ok := e.inst.Leading(context.Background())
	if ok {
		release()
	}
	return ok
}

// WaitLeader waits until some process leads: this one, or, on
// PostgreSQL, another one this process can reach (its /readyz through
// Client answers ready).
func (e *Embedded) WaitLeader(ctx context.Context) error {
	for {
		if e.Leading() {
			return nil
		}
		if _, err := e.remote.Lanes(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedded: no leader: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops gracefully: the workers made by NewWorker stop (their
// running jobs may finish until ctx is done, then they are handed back),
// the HTTP server stops taking requests, the dispatcher stops (on
// PostgreSQL the term is resigned, so another process takes over at
// once) and the store is closed. What was acknowledged is durable.
func (e *Embedded) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	ws := e.workers
	e.workers = nil
	e.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	werrs := make([]error, len(ws))
	for i, w := range ws {
		wg.Go(func() { werrs[i] = w.Stop(ctx) })
	}
	wg.Wait()
	errs = append(errs, werrs...)
	if e.hs != nil {
		// Long polls forwarded by other processes end with the dispatcher.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		e.inst.Stop()
		if err := e.hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
		cancel()
		<-e.served
	}
	e.remote.CloseIdleConnections()
	errs = append(errs, e.inst.Close())
	return errors.Join(errs...)
}
