package instance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/datadir"
	"github.com/fairwayhq/fairway/internal/ha"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/server"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// Options configure an Instance.
type Options struct {
	// Config names the store: Server.Store, a postgres:// URL, or SQLite
	// in Server.DataDir when it is empty.
	Config config.Config
	Logger *slog.Logger
	// Advertise is the address (host:port) other instances on the same
	// PostgreSQL forward requests to while this one leads; default
	// Config.Server.Advertise. Unused on SQLite.
	Advertise string
	// Holder names this process start among the instances; default
	// InstanceID().
	Holder string
	// OnLead, if set, is called with each term this instance wins, once
	// its server is ready (PostgreSQL only).
	OnLead func(leader.Term)
}

// Instance is one running fairway instance.
type Instance struct {
	where string
	log   *slog.Logger

	// SQLite: the store and the one server.
	st    *OpenedStore
	srv   *server.Server
	local *server.Local

	tracer *tracing.Tracer // nil: tracing off

	// PostgreSQL: the node and its Run.
	node     *ha.Node
	stopNode context.CancelFunc
	nodeDone chan struct{}

	stopOnce sync.Once
}

// Open opens the store and starts the dispatcher (SQLite), or starts
// campaigning for the leadership (PostgreSQL). The instance runs until
// Stop or Close, not until ctx ends (ctx bounds the opening).
func Open(ctx context.Context, opts Options) (*Instance, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	tracer, err := tracing.New(ctx, opts.Config.Tracing, opts.Logger)
	if err != nil {
		return nil, err
	}
	if postgres.IsURL(opts.Config.Server.Store) {
		i, err := openHA(ctx, opts, tracer)
		if err != nil {
			shutdownTracer(tracer, opts.Logger)
		}
		return i, err
	}
	st, err := OpenStore(ctx, opts.Config)
	if err != nil {
		shutdownTracer(tracer, opts.Logger)
		return nil, err
	}
	srv, err := server.New(server.Options{Store: st, Config: opts.Config, Logger: opts.Logger, Tracer: tracer})
	if err != nil {
		_ = st.Close()
		shutdownTracer(tracer, opts.Logger)
		return nil, err
	}
	if err := srv.Start(context.WithoutCancel(ctx)); err != nil {
		_ = st.Close()
		shutdownTracer(tracer, opts.Logger)
		return nil, fmt.Errorf("start: %w", err)
	}
	return &Instance{where: st.Where, log: opts.Logger, st: st, srv: srv, local: srv.Local(), tracer: tracer}, nil
}

// shutdownTracer exports the spans still buffered, for at most 5 s.
func shutdownTracer(t *tracing.Tracer, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not exported at shutdown", "err", err)
	}
}

// openHA starts an ha.Node on the PostgreSQL store.
func openHA(ctx context.Context, opts Options, tracer *tracing.Tracer) (*Instance, error) {
	cfg := opts.Config
	addr := opts.Advertise
	if addr == "" {
		addr = cfg.Server.Advertise
	}
	holder := opts.Holder
	if holder == "" {
		holder = InstanceID()
	}
	node, err := ha.New(ctx, ha.Options{
		URL: cfg.Server.Store, Config: cfg, Logger: opts.Logger, OnLead: opts.OnLead, Tracer: tracer,
		Lease: leader.Lease{Holder: holder, Address: addr, TTL: cfg.Server.LeaderTTL.D()},
	})
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	i := &Instance{where: "store " + postgres.Redact(cfg.Server.Store), log: opts.Logger,
		node: node, stopNode: stop, nodeDone: make(chan struct{}), tracer: tracer}
	go func() {
		defer close(i.nodeDone)
		node.Run(runCtx)
	}()
	go warnMaintenance(runCtx, cfg.Server.Store, opts.Logger)
	return i, nil
}

// warnMaintenance logs what, in the PostgreSQL server's settings, leaves
// the store's tables to grow without bound (autovacuum off). It only
// logs: a database that cannot be read now is the node's to report.
func warnMaintenance(ctx context.Context, url string, log *slog.Logger) {
	if log == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	warnings, err := postgres.MaintenanceWarnings(ctx, url)
	if err != nil {
		log.Debug("could not read the PostgreSQL server's maintenance settings", "err", err)
		return
	}
	for _, w := range warnings {
		log.Warn(w)
	}
}

// Where says where the state is kept, for people: "data in DIR" or the
// redacted PostgreSQL URL.
func (i *Instance) Where() string { return i.where }

// Handler is the HTTP API and UI: the server's (SQLite), or the node's,
// which serves as the leader or forwards to it (PostgreSQL).
func (i *Instance) Handler() http.Handler {
	if i.node != nil {
		return i.node.Handler()
	}
	return i.srv.Handler()
}

// Leading returns the in-process API of the server while this instance
// leads, with the context a call must run under: ctx, ended also when the
// term ends, so that nothing is served under a term that is over. ok is
// false while this instance does not lead (a standby, or stopping).
func (i *Instance) Leading(ctx context.Context) (local *server.Local, callCtx context.Context, release func(), ok bool) {
	if i.node == nil {
		return i.local, ctx, func() {}, true
	}
	srv, term, ok := i.node.Leading()
	if !ok {
		return nil, nil, nil, false
	}
	callCtx, release = ha.WithTerm(ctx, term)
	return srv.Local(), callCtx, release, true
}

// Stop stops the dispatcher, or ends the term and stops campaigning: what
// was acknowledged is committed; requests still in flight get 503. The
// store stays open for Close.
func (i *Instance) Stop() {
	i.stopOnce.Do(func() {
		if i.node != nil {
			i.stopNode()
			<-i.nodeDone // the term, if any, is resigned: a standby takes over at once
			return
		}
		_ = i.srv.Close()
	})
}

// Close stops the instance (Stop), exports the spans still buffered and
// closes the store.
func (i *Instance) Close() error {
	i.Stop()
	shutdownTracer(i.tracer, i.log)
	if i.st != nil {
		return i.st.Close()
	}
	return nil
}

// InstanceID names a process start among the instances: host and a
// random suffix.
func InstanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// SQLitePath is the SQLite database file of a data directory.
func SQLitePath(dataDir string) string { return filepath.Join(dataDir, "fairway.db") }

// queueingStore is a store whose writes are queued (both drivers'):
// what the dispatcher needs to form batch n+1 while the store runs batch
// n (Ready) and to take writes again after a failed queued transaction
// (Resume).
type queueingStore interface {
	store.Store
	store.Queueing
}

// OpenedStore is a store with what closes it and a description for people.
// It keeps the driver's store.Queueing: a dispatcher on it that found no
// Ready would wait for every commit to be durable before it forms the
// next batch, and would never Resume the store after a failed queued
// transaction.
type OpenedStore struct {
	queueingStore
	Where   string // "data in DIR" or the redacted URL
	release func()
}

// ClaimsInPlace passes on the driver's store.ClaimsInPlace (SQLite's).
func (o *OpenedStore) ClaimsInPlace() bool {
	c, ok := o.queueingStore.(store.ClaimsInPlace)
	return ok && c.ClaimsInPlace()
}

// ReadyUnlessSyncing passes on the driver's store.SyncGathering
// (SQLite's); a driver without one has no fsync of its own to wait for,
// and the channel is nil.
func (o *OpenedStore) ReadyUnlessSyncing() <-chan struct{} {
	if g, ok := o.queueingStore.(store.SyncGathering); ok {
		return g.ReadyUnlessSyncing()
	}
	return nil
}

// Close closes the store and releases what guarded it.
func (o *OpenedStore) Close() error {
	err := o.queueingStore.Close()
	o.release()
	return err
}

// OpenStore opens the configured store: SQLite in the data directory,
// locked against a second server on it, or PostgreSQL (unfenced).
func OpenStore(ctx context.Context, cfg config.Config) (*OpenedStore, error) {
	if postgres.IsURL(cfg.Server.Store) {
		st, err := postgres.Open(ctx, cfg.Server.Store)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", postgres.Redact(cfg.Server.Store), err)
		}
		return &OpenedStore{queueingStore: st, Where: postgres.Redact(cfg.Server.Store), release: func() {}}, nil
	}
	release, err := LockDataDir(cfg.Server.DataDir)
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, SQLitePath(cfg.Server.DataDir))
	if err != nil {
		release()
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &OpenedStore{queueingStore: st, Where: "data in " + cfg.Server.DataDir, release: release}, nil
}

// LockDataDir takes the data directory's lock (the one a server holds)
// and returns its release.
func LockDataDir(dir string) (func(), error) {
	lock, err := datadir.Acquire(dir)
	if err != nil {
		return nil, err
	}
	return func() { _ = lock.Release() }, nil
}
