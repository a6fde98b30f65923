package ha

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"database/sql"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/server"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// Options configures a Node.
type Options struct {
	URL    string // the PostgreSQL store
	Config config.Config
	Logger *slog.Logger
	Lease  leader.Lease // Holder unique per process start; Address where this instance serves
	// OnLead, if set, is called with each term this Node wins, once its
	// server is ready (tests measure failover with it).
	OnLead func(t leader.Term)
	// Tracer writes the spans of jobs while this Node leads (nil: off).
	Tracer *tracing.Tracer
}

// Node is one instance: a standby, or the leader serving the API.
type Node struct {
	opts   Options
	pool   *sql.DB // the elector's connections
	active atomic.Pointer[leading]
	reads  atomic.Pointer[server.Server] // the standby's read-only server
	// stopping is closed when Run's ctx ends: forwarded requests held by
	// the leader (a worker's heartbeat, a lease poll) are cut then, so
	// that the HTTP server's shutdown does not wait for them.
	stopping chan struct{}
	watch    *leaderWatch // the leadership row as last read
}

// leading is the server of the term being led, and the term's context:
// once it ends, the Node no longer serves as leader, even before lead has
// stopped the server.
type leading struct {
	ctx  context.Context
	term leader.Term
	srv  *server.Server
}

// New connects the elector; Run campaigns.
func New(ctx context.Context, opts Options) (*Node, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := postgres.OpenDB(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("ha: connect: %w", err)
	}
	pool.SetMaxOpenConns(4)
	if _, err := postgres.Migrate(ctx, opts.URL); err != nil {
		_ = pool.Close()
		return nil, err
	}
	n := &Node{opts: opts, pool: pool, stopping: make(chan struct{})}
	n.watch = newLeaderWatch(pool, n.ttl(), opts.Logger)
	return n, nil
}

// Run campaigns and leads until ctx ends, then closes the Node.
func (n *Node) Run(ctx context.Context) {
	defer func() { _ = n.pool.Close() }()
	stop := context.AfterFunc(ctx, func() { close(n.stopping) })
	defer stop()
	if closeReads, err := n.openReads(ctx); err != nil {
		n.opts.Logger.Warn("ha: standby reads unavailable: every request gets not_leader", "err", err)
	} else {
		defer closeReads()
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); n.watch.run(watchCtx) }()
	defer func() { stopWatch(); <-watched }()
	e := &leader.Elector{DB: n.pool, Lease: n.opts.Lease, Log: n.opts.Logger}
	e.Run(ctx, n.lead)
}

// ttl is the leadership lease's length.
func (n *Node) ttl() time.Duration {
	if n.opts.Lease.TTL > 0 {
		return n.opts.Lease.TTL
	}
	return leader.DefaultTTL
}

// openReads opens the store (unfenced: it is only read) and a read-only
// server on it, through which the standby answers reads.
func (n *Node) openReads(ctx context.Context) (func(), error) {
	st, err := postgres.Open(ctx, n.opts.URL, postgres.WithReadConns(4))
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Options{Store: st, Config: n.opts.Config, Logger: n.opts.Logger, ReadOnly: true})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	n.reads.Store(srv)
	return func() {
		n.reads.Store(nil)
		_ = srv.Close()
		_ = st.Close()
	}, nil
}

// lead serves the API for one term, until its context ends.
func (n *Node) lead(ctx context.Context, t leader.Term) {
	log := n.opts.Logger.With("term", t.Number)
	fence := postgres.Fence{SQL: leader.FenceSQL, Args: t.FenceArgs(), Err: leader.FenceError}
	st, err := postgres.Open(ctx, n.opts.URL, postgres.WithFence(fence), postgres.WithIdleTxTimeout(t.TTL),
		postgres.WithStatementTimeout(StatementTimeout(t.TTL)), postgres.WithLifetime(ctx))
	if err != nil {
		log.Error("ha: open the store for the term", "err", err)
		return
	}
	defer st.Close()
	srv, err := server.New(server.Options{Store: st, Config: n.opts.Config, Logger: n.opts.Logger, Tracer: n.opts.Tracer})
	if err != nil {
		log.Error("ha: build the server", "err", err)
		return
	}
	defer srv.Close()
	if err := srv.Start(ctx); err != nil {
		log.Error("ha: start the server: rebuild failed", "err", err)
		return
	}
	n.active.Store(&leading{ctx: ctx, term: t, srv: srv})
	log.Info("ha: leading: the dispatcher runs")
	if n.opts.OnLead != nil {
		n.opts.OnLead(t)
	}
	select {
	case <-ctx.Done():
	case <-st.Broken():
		// A writer connection failed (reset, or silent past the statement
		// timeout): it is not reopened, so the term ends, and the next
		// one, here or elsewhere, opens the store afresh.
		log.Warn("ha: a writer connection to the database failed: ending the term")
	}
	// Stand by at once: new requests get not_leader while the server
	// stops (which waits for a transaction the database may not answer).
	n.active.Store(nil)
	log.Info("ha: term over: standing by")
}

// Handler routes requests to the term's server while this Node leads, and
// answers as a standby otherwise.
func (n *Node) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l := n.active.Load(); l != nil && l.ctx.Err() == nil {
			if r.URL.Path == "/readyz" {
				n.readyLeader(w, l)
				return
			}
			l.srv.Handler().ServeHTTP(w, r.WithContext(withTerm(r.Context(), l.ctx)))
			return
		}
		n.standby(w, r)
	})
}

// withTerm is ctx, ended also when the term's context ends: a request
// served under a term does not outlive it (a command already handed to
// the dispatcher still gets its answer: committed, or refused).
func withTerm(ctx, term context.Context) context.Context {
	ctx, _ = WithTerm(ctx, term) // released when ctx ends
	return ctx
}

// WithTerm is withTerm for an in-process call (package instance): ctx,
// ended also when the term's context ends, and its release, to call once
// the call is over.
func WithTerm(ctx, term context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(term, cancel)
	context.AfterFunc(ctx, func() { stop() })
	return ctx, cancel
}

// Leading returns the server of the term this Node leads and the term's
// context, or ok false while it does not lead (a standby, or the term
// just ended).
func (n *Node) Leading() (srv *server.Server, term context.Context, ok bool) {
	l := n.active.Load()
	if l == nil || l.ctx.Err() != nil {
		return nil, nil, false
	}
	return l.srv, l.ctx, true
}

// StatementTimeout bounds each round trip of a term's writer connections
// (postgres.WithStatementTimeout): 2·TTL, at least 5 s. A database that
// stops answering fails the term's writes within it, so that requests
// held by a leader cut off from the database get an answer (503) soon
// after the term ends, instead of when the network gives up.
func StatementTimeout(ttl time.Duration) time.Duration { return max(2*ttl, 5*time.Second) }

// readyLeader is /readyz while leading: the server's readiness with the
// role and the term.
func (n *Node) readyLeader(w http.ResponseWriter, l *leading) {
	if err := l.srv.Ready(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": err.Error(), "role": "leader", "term": l.term.Number})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "role": "leader", "term": l.term.Number})
}

// standby answers /healthz, /readyz and the reads it can serve from the
// database, and forwards the rest to the leader (forward.go); with no
// leader, 503 not_leader.
func (n *Node) standby(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	case "/readyz":
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "standby", "role": "standby", "leader": n.knownLeader()})
		return
	}
	addr := n.leaderAddress(r.Context())
	if addr != "" {
		w.Header().Set("X-Fairway-Leader", addr)
	}
	reads := n.reads.Load()
	if reads != nil && (servedByStandby(r) || r.URL.Path == "/metrics" || addr == "" && readsLeaderMemory(r)) {
		// With no leader, a listing of unfinished jobs is answered from
		// the database: correct, only slower (no index on their state).
		reads.Handler().ServeHTTP(w, r)
		return
	}
	if addr == "" {
		notLeader(w, "this instance is a standby and knows of no leader (none leads right now, or the database is out of reach); retry shortly")
		return
	}
	n.forward(w, r, addr)
}

// servedByStandby reports whether a standby answers r from the database:
// the reads of jobs, their executions, events, logs (not followed) and
// reports, and of schedules. What needs the dispatcher's state (explain,
// lanes, workers, a followed log) and every write go to the leader.
func servedByStandby(r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/v1/") {
		return false
	}
	p := strings.TrimPrefix(r.URL.Path, "/api/v1/")
	switch {
	case strings.HasSuffix(p, "/explain"), p == "lanes", p == "workers", p == "openapi.json":
		return false
	case readsLeaderMemory(r):
		return false
	case strings.HasSuffix(p, "/logs"):
		q := r.URL.Query()
		return q.Get("follow") == "" && !strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	}
	return strings.HasPrefix(p, "jobs") || strings.HasPrefix(p, "schedules") || p == "events" ||
		p == "failures" || p == "successes" || p == "sla-compliance" || p == "series"
}

// readsLeaderMemory reports whether r lists jobs of an unfinished state
// or reads the audit feed (not one job's or schedule's events), which the
// leader answers from its dispatcher's memory (the store keeps no index
// on an unfinished job's state, nor on its live attempt's events: store
// doc.go, "The hot row and its indexes").
func readsLeaderMemory(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	if r.URL.Path == "/api/v1/events" {
		return q.Get("job_id") == "" && q.Get("schedule_id") == ""
	}
	if r.URL.Path != "/api/v1/jobs" {
		return false
	}
	for _, v := range append(q["state"], q["status"]...) {
		for _, st := range strings.Split(v, ",") {
			if s := store.State(strings.TrimSpace(st)); s.Valid() && !s.Terminal() {
				return true
			}
		}
	}
	return false
}

// leaderAddress is the live leader's address as the watch last saw it
// (no database round trip when that view is fresh; else it waits up to
// TTL/3 for a read): "" when none leads, when the row still names this
// Node between two of its terms, or when the database is out of reach.
func (n *Node) leaderAddress(ctx context.Context) string {
	return n.addressIn(n.watch.fresh(ctx, n.ttl()/3))
}

// knownLeader is leaderAddress from memory only (/readyz).
func (n *Node) knownLeader() string {
	s, _ := n.watch.current()
	return n.addressIn(s)
}

// addressIn is the leader's address in the view s, if it is fresh and
// names another instance.
func (n *Node) addressIn(s *leaderSeen) string {
	if s == nil || !s.cur.Live || s.cur.Holder == n.opts.Lease.Holder || !time.Now().Before(s.until) {
		return ""
	}
	return s.cur.Address
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
