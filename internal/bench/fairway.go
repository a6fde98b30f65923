package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/embedded"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/ha"
	"github.com/fairwayhq/fairway/internal/instance"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/server"
	"github.com/fairwayhq/fairway/internal/store"
	_ "github.com/fairwayhq/fairway/internal/store/postgres" // registers the pgx database/sql driver
	"github.com/fairwayhq/fairway/worker"
)

// The fairway system: a real fairway server (internal/server on the SQLite
// store, WAL fsync'd before every answer, config.Default(); or, with a
// PostgreSQL store, one ha.Node that leads, every write fenced by its
// term, as fairway server --store runs) listening on 127.0.0.1, real
// fairway workers (package worker) and producers (package client) talking
// HTTP to it, all in this process.

// jobType is the type of every benchmark job; config.Default() accepts
// unknown types, so it needs no configuration.
const jobType = "bench"

// Priorities of the priority workload's classes (same type, same lane).
const (
	priorityHigh = 900
	priorityLow  = 100
)

// maxServerBatch is the most specs one POST /jobs/batch takes.
const maxServerBatch = 1000

// FairwayOptions tunes the fairway system.
type FairwayOptions struct {
	// Batch is the chunk size of InsertBatch, capped at maxServerBatch.
	Batch int
	// InsertParallel is how many batch requests InsertBatch keeps in flight.
	InsertParallel int
	// Workers is the number of worker instances the concurrency is split
	// over (each gets Concurrency/Workers slots); 0 picks defaultWorkers.
	Workers int
	// PollWait and BatchWindow are passed to every worker (0: the
	// worker's default; a negative BatchWindow sends reports at once).
	PollWait    time.Duration
	BatchWindow time.Duration
	// DataDir is the parent of the per-run data directories (default: the
	// system's temp directory).
	DataDir string
	// Store, a postgres:// URL, runs the server on PostgreSQL instead of
	// SQLite: every run starts on a fresh schema fairway_bench there.
	Store string
	// Logger receives the server's and the workers' warnings.
	Logger *slog.Logger
	// GCFloor is the process's GC floor in bytes (package gcfloor), for
	// the config line: Main starts it, as serve does for fairway server.
	GCFloor int64
	// NoKeys makes the producers' client send specs without the
	// submit token it sends every submit with by default
	// (client.WithoutGeneratedKeys), as the peers' inserts have none.
	NoKeys bool
	// Embedded runs fairway embedded (package embedded) instead of a
	// server: producers and workers call the dispatcher in process, with
	// no HTTP (embedded.go).
	Embedded bool
	// PayloadBytes pads every job's payload to about this many bytes
	// with a "p" string of random hex (0: no pad): the handler ignores it,
	// the store keeps it (a job spec of a realistic size).
	PayloadBytes int
	// LeaderTTL is the leadership lease's length on PostgreSQL (0: the
	// configuration's default, server.leader_ttl).
	LeaderTTL time.Duration
}

// defaultWorkers is how many worker instances share the concurrency when
// Workers is 0, capped at the concurrency. One worker with all the slots
// measured as good as or better than 2 or 4 on every workload
// (docs/benchmarks.md).
const defaultWorkers = 1

type fairwaySystem struct {
	opts FairwayOptions
	log  *slog.Logger
	pad  string // the payloads' "p" field (FairwayOptions.PayloadBytes)

	mu  sync.Mutex
	run *fairwayRun // the server of the current run; nil before Reset
}

// fairwayRun is one fresh server with its data directory.
type fairwayRun struct {
	dir    string
	st     store.Store
	srv    *server.Server
	hs     *http.Server
	served chan struct{}
	url    string
	cl     *client.Client // the API (producers: see prod)
	prod   producer       // the producers' way in: cl, or the embedded handle
	// fw is the embedded fairway of an --embedded run (embedded.go); its
	// workers use its in-process transport.
	fw *embedded.Embedded

	// On PostgreSQL the server is an ha.Node that leads (every write
	// fenced by its term, as fairway server --store runs it); stopNode
	// ends its term and nodeDone closes once it has stopped.
	stopNode func()
	nodeDone chan struct{}
}

// NewFairway returns the fairway System. It starts nothing until Reset.
func NewFairway(opts FairwayOptions) System {
	if opts.Batch <= 0 || opts.Batch > maxServerBatch {
		opts.Batch = maxServerBatch
	}
	opts.InsertParallel = max(1, opts.InsertParallel)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &fairwaySystem{opts: opts, log: opts.Logger, pad: payloadPad(opts.PayloadBytes)}
}

func (f *fairwaySystem) Name() string { return "fairway" }

func (f *fairwaySystem) Info(ctx context.Context) (Info, error) {
	cfg := config.Default()
	pw := f.opts.PollWait
	if pw <= 0 {
		pw = worker.DefaultPollWait
	}
	bw := "none"
	switch {
	case f.opts.BatchWindow == 0:
		bw = worker.DefaultBatchWindow.String()
	case f.opts.BatchWindow > 0:
		bw = f.opts.BatchWindow.String()
	}
	pad := ""
	if f.pad != "" {
		pad = fmt.Sprintf(",payload_bytes:%d", f.opts.PayloadBytes)
	}
	return Info{
		Durability:       f.durability(),
		BatchMode:        "SubmitBatch",
		BatchSize:        f.opts.Batch,
		BatchParallelism: f.opts.InsertParallel,
		SupportsPriority: true,
		Config: fmt.Sprintf("workers:%d,poll_wait:%s,batch_window:%s,lease_ttl:%s,gc_floor:%s,%s",
			f.workers(), pw, bw, cfg.Server.LeaseTTL.D(), config.ByteSize(f.opts.GCFloor), f.transportInfo()) + pad,
	}, nil
}

// durability says where a run keeps its state and when it answers.
func (f *fairwaySystem) durability() string {
	if f.opts.Store != "" {
		return "postgres:synchronous_commit,commit_before_ack,leader_fenced"
	}
	return "sqlite:wal,fsync_before_ack"
}

// benchSchema is the PostgreSQL schema each run starts afresh.
const benchSchema = "fairway_bench"

// resetBenchSchema drops and creates the run's schema, the URL's
// search_path if it names one (a test's own schema), else benchSchema, and
// returns storeURL with its search_path set to it.
func resetBenchSchema(ctx context.Context, storeURL string) (string, error) {
	u, err := url.Parse(storeURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	schema := q.Get("search_path")
	if schema == "" {
		schema = benchSchema
	}
	db, err := sql.Open("pgx", storeURL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	id := pgx.Identifier{schema}.Sanitize()
	if _, err := db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+id+" CASCADE; CREATE SCHEMA "+id); err != nil {
		return "", fmt.Errorf("reset schema %s: %w", schema, err)
	}
	// Start every run from a fresh checkpoint, as peerbench does for River
	// after its reset, so that the previous run's writes (this system's or
	// a peer's) are less likely to be checkpointed inside the measurement.
	// Best effort: CHECKPOINT needs a superuser or pg_checkpoint.
	_, _ = db.ExecContext(ctx, "CHECKPOINT")
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// workers is the number of worker instances (before the cap at the
// concurrency).
func (f *fairwaySystem) workers() int {
	if f.opts.Workers > 0 {
		return f.opts.Workers
	}
	return defaultWorkers
}

// Reset stops the previous server, if any, and starts a fresh one on a
// new, empty data directory.
func (f *fairwaySystem) Reset(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil {
		err := f.run.close()
		f.run = nil
		if err != nil {
			return fmt.Errorf("stop previous server: %w", err)
		}
	}
	r, err := f.startRun(ctx)
	if err != nil {
		return err
	}
	f.run = r
	return nil
}

func (f *fairwaySystem) startRun(ctx context.Context) (r *fairwayRun, err error) {
	dir, err := os.MkdirTemp(f.opts.DataDir, "fairway-bench-")
	if err != nil {
		return nil, err
	}
	if f.opts.Embedded {
		return f.startEmbedded(ctx, dir)
	}
	r = &fairwayRun{dir: dir, served: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = r.close()
		}
	}()
	cfg := config.Default()
	cfg.Server.DataDir = dir
	if f.opts.LeaderTTL > 0 {
		cfg.Server.LeaderTTL = config.Duration(f.opts.LeaderTTL)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	var handler http.Handler
	if f.opts.Store == "" {
		handler, err = r.startSQLite(ctx, cfg, f.log)
	} else {
		handler, err = r.startLeader(ctx, f.opts.Store, cfg, ln.Addr().String(), f.log)
	}
	if err != nil {
		_ = ln.Close()
		return r, err
	}
	r.hs = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(f.log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(r.served)
		_ = r.hs.Serve(ln)
	}()
	r.url = "http://" + ln.Addr().String()
	var copts []client.Option
	if f.opts.NoKeys {
		copts = append(copts, client.WithoutGeneratedKeys())
	}
	if r.cl, err = client.New(r.url, copts...); err != nil {
		return r, err
	}
	r.prod = r.cl
	if err = r.cl.Ready(ctx); err != nil {
		return r, fmt.Errorf("server not ready: %w", err)
	}
	return r, nil
}

// startSQLite opens the SQLite store in the run's directory and starts a
// server on it, as fairway server does by default: through the store
// fairway server opens (instance.OpenStore), so that the bench measures
// what the server runs (a wrapper that hid the driver's store.Queueing
// once slowed fairway server and embedded, not the bench).
func (r *fairwayRun) startSQLite(ctx context.Context, cfg config.Config, log *slog.Logger) (http.Handler, error) {
	cfg.Server.DataDir = r.dir
	st, err := instance.OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r.st = st
	if r.srv, err = server.New(server.Options{Store: r.st, Config: cfg, Logger: log}); err != nil {
		return nil, err
	}
	// The dispatcher runs until Close, not until the workload's ctx ends.
	if err = r.srv.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	return r.srv.Handler(), nil
}

// leadTimeout bounds the wait for the bench's one instance to win its
// first term on PostgreSQL.
const leadTimeout = 30 * time.Second

// startLeader resets the bench schema and runs one ha.Node on it, as
// fairway server --store runs: it returns once the Node leads, with every
// write transaction fenced by its term.
func (r *fairwayRun) startLeader(ctx context.Context, storeURL string, cfg config.Config, addr string, log *slog.Logger) (http.Handler, error) {
	u, err := resetBenchSchema(ctx, storeURL)
	if err != nil {
		return nil, err
	}
	cfg.Server.Store = u
	led := make(chan struct{}, 1)
	node, err := ha.New(ctx, ha.Options{URL: u, Config: cfg, Logger: log,
		Lease: leader.Lease{Holder: "bench-" + filepath.Base(r.dir), Address: addr, TTL: cfg.Server.LeaderTTL.D()},
		OnLead: func(leader.Term) {
			select {
			case led <- struct{}{}:
			default:
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("start the instance: %w", err)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stopNode, r.nodeDone = stop, make(chan struct{})
	go func() {
		defer close(r.nodeDone)
		node.Run(runCtx)
	}()
	timer := time.NewTimer(leadTimeout)
	defer timer.Stop()
	select {
	case <-led:
		return node.Handler(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("the instance did not win a term within %s", leadTimeout)
	}
}

// close stops the HTTP server, the dispatcher and the store, and removes
// the data directory.
func (r *fairwayRun) close() error {
	var errs []error
	if r.hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.hs.Shutdown(ctx); err != nil {
			_ = r.hs.Close()
		}
		cancel()
		<-r.served
	}
	if r.fw != nil {
		errs = append(errs, r.fw.Close(context.Background()))
	} else if r.cl != nil {
		r.cl.CloseIdleConnections()
	}
	if r.stopNode != nil {
		r.stopNode()
		<-r.nodeDone
	}
	if r.srv != nil {
		errs = append(errs, r.srv.Close())
	}
	if r.st != nil {
		errs = append(errs, r.st.Close())
	}
	errs = append(errs, os.RemoveAll(r.dir))
	return errors.Join(errs...)
}

func (f *fairwaySystem) current() (*fairwayRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run == nil {
		return nil, errors.New("fairway: no server: Reset first")
	}
	return f.run, nil
}

// payload is what a job carries to its handler.
type payload struct {
	Seq        int64 `json:"s"`
	EnqueuedAt int64 `json:"t"`
	Class      Class `json:"c,omitempty"`
}

// spec is the job spec of j: a no-op job of jobType whose payload carries
// j; the priority classes get priorities 900 and 100.
func spec(j Job) api.JobSpec {
	// The payload is three integers: format it directly.
	b := make([]byte, 0, 48)
	b = append(b, `{"s":`...)
	b = strconv.AppendInt(b, j.Seq, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, j.EnqueuedAt, 10)
	if j.Class != ClassNormal {
		b = append(b, `,"c":`...)
		b = strconv.AppendUint(b, uint64(j.Class), 10)
	}
	b = append(b, '}')
	s := api.JobSpec{Type: jobType, Payload: b}
	switch j.Class {
	case ClassHigh:
		p := priorityHigh
		s.Priority = &p
	case ClassLow:
		p := priorityLow
		s.Priority = &p
	}
	return s
}

// payloadPad is the hex string that makes the payload of spec about n
// bytes (exactly n for a 7-digit seq and a 19-digit time): random, so
// that no store compresses it away.
func payloadPad(n int) string {
	const base = len(`{"s":1000000,"t":1700000000000000000,"p":""}`)
	if n <= base {
		return ""
	}
	b := make([]byte, (n-base+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// spec is the package's spec of j with the payload padded.
func (f *fairwaySystem) spec(j Job) api.JobSpec {
	s := spec(j)
	if f.pad != "" {
		p := make([]byte, 0, len(s.Payload)+len(f.pad)+7)
		p = append(p, s.Payload[:len(s.Payload)-1]...)
		p = append(p, `,"p":"`...)
		p = append(p, f.pad...)
		s.Payload = append(p, `"}`...)
	}
	return s
}

// InsertBatch submits the jobs with SubmitBatch in chunks of Batch, up to
// InsertParallel chunks in flight.
func (f *fairwaySystem) InsertBatch(ctx context.Context, jobs []Job) error {
	r, err := f.current()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	chunks := make(chan []Job)
	var wg sync.WaitGroup
	for range f.opts.InsertParallel {
		wg.Go(func() {
			specs := make([]api.JobSpec, 0, f.opts.Batch)
			for c := range chunks {
				specs = specs[:0]
				for _, j := range c {
					specs = append(specs, f.spec(j))
				}
				if _, err := r.prod.SubmitBatch(ctx, specs); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for len(jobs) > 0 {
		n := min(f.opts.Batch, len(jobs))
		select {
		case chunks <- jobs[:n]:
		case <-ctx.Done():
			break feed
		}
		jobs = jobs[n:]
	}
	close(chunks)
	wg.Wait()
	return context.Cause(ctx)
}

// Insert submits one job; it returns once the server has committed it.
func (f *fairwaySystem) Insert(ctx context.Context, j Job) error {
	r, err := f.current()
	if err != nil {
		return err
	}
	_, err = r.prod.Submit(ctx, f.spec(j))
	return err
}

// StartWorkers starts the worker instances, splitting cfg.Concurrency
// slots over them, each with its own client (connection pool) as separate
// worker processes would have.
func (f *fairwaySystem) StartWorkers(ctx context.Context, cfg WorkerConfig) (func(context.Context) error, error) {
	if cfg.Concurrency < 1 {
		return nil, errors.New("concurrency must be at least 1")
	}
	onStart := cfg.OnStart
	h := worker.HandlerFunc(func(_ context.Context, job worker.Job) (json.RawMessage, error) {
		var p payload
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return nil, worker.Fail(api.FailStartError, fmt.Errorf("payload: %w", err))
		}
		if onStart != nil {
			onStart(Job{Seq: p.Seq, EnqueuedAt: p.EnqueuedAt, Class: p.Class, LeasedAt: job.UpdatedAt.UnixNano()})
		}
		return nil, nil
	})
	return f.startWorkers(ctx, cfg.Concurrency, h)
}

// startWorkers starts worker instances sharing concurrency slots, all
// running h for the bench job type, and waits until they are registered.
func (f *fairwaySystem) startWorkers(ctx context.Context, concurrency int, h worker.Handler) (func(context.Context) error, error) {
	r, err := f.current()
	if err != nil {
		return nil, err
	}
	if concurrency < 1 {
		return nil, errors.New("concurrency must be at least 1")
	}
	n := min(f.workers(), concurrency)
	var ws []*runningWorker
	stopAll := func(sctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, len(ws))
		for i, rw := range ws {
			wg.Go(func() { errs[i] = rw.stop(sctx) })
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	for i := range n {
		slots := concurrency / n
		if i < concurrency%n {
			slots++
		}
		rw, err := f.startWorker(r, fmt.Sprintf("bench-%d", i+1), slots, h)
		if err != nil {
			_ = stopAll(ctx)
			return nil, err
		}
		ws = append(ws, rw)
	}
	// Wait until every worker is registered, so that the workload's clock
	// starts with the workers ready, as it does for the other systems.
	if err := waitRegistered(ctx, r.cl, ws); err != nil {
		_ = stopAll(ctx)
		return nil, err
	}
	return stopAll, nil
}

// runningWorker is one worker instance and its Run goroutine.
type runningWorker struct {
	w      *worker.Worker
	cl     *client.Client // nil with the in-process transport
	exited chan struct{}  // closed when Run has returned
	err    error          // Run's error, set before exited is closed
}

// startWorker starts a worker with its own client (connection pool), as a
// separate worker process would have; in an --embedded run, with the
// in-process transport. It runs until stop.
func (f *fairwaySystem) startWorker(r *fairwayRun, name string, slots int, h worker.Handler) (*runningWorker, error) {
	opts := worker.Options{
		Name:        name,
		Slots:       slots,
		Handlers:    map[string]worker.Handler{jobType: h},
		PollWait:    f.opts.PollWait,
		BatchWindow: f.opts.BatchWindow,
		Logger:      f.log,
	}
	var cl *client.Client
	if r.fw != nil {
		opts.Transport = r.fw.Transport()
	} else {
		var err error
		if cl, err = client.New(r.url); err != nil {
			return nil, err
		}
		opts.Client = cl
	}
	w, err := worker.New(opts)
	if err != nil {
		return nil, err
	}
	rw := &runningWorker{w: w, cl: cl, exited: make(chan struct{})}
	go func() {
		defer close(rw.exited)
		rw.err = w.Run(context.Background())
	}()
	return rw, nil
}

// stop stops the worker gracefully, bounded by ctx, and returns what went
// wrong, if anything.
func (rw *runningWorker) stop(ctx context.Context) error {
	err := rw.w.Stop(ctx)
	select {
	case <-rw.exited:
		err = errors.Join(err, rw.err)
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("worker did not stop: %w", ctx.Err()))
	}
	if rw.cl != nil {
		rw.cl.CloseIdleConnections()
	}
	return err
}

// waitRegistered polls GET /workers until every worker is registered; it
// gives up when a worker exits (it could not register) or after 30s.
func waitRegistered(ctx context.Context, cl *client.Client, ws []*runningWorker) error {
	deadline := time.Now().Add(boundedWait(ctx, 30*time.Second))
	for {
		list, err := cl.Workers(ctx)
		if err != nil {
			return err
		}
		if len(list) >= len(ws) {
			return nil
		}
		for _, rw := range ws {
			select {
			case <-rw.exited:
				return fmt.Errorf("worker exited before registering: %v", rw.err)
			default:
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d workers registered", len(list), len(ws))
		}
		time.Sleep(time.Millisecond)
	}
}

// Outstanding is pending plus running (leased or started, not yet
// completed) summed over the lanes of GET /lanes.
func (f *fairwaySystem) Outstanding(ctx context.Context) (int64, error) {
	r, err := f.current()
	if err != nil {
		return 0, err
	}
	ll, err := r.cl.Lanes(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, l := range ll.Lanes {
		n += int64(l.Pending + l.Running)
	}
	return n, nil
}

// Close stops the current server and removes its data directory.
func (f *fairwaySystem) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run == nil {
		return nil
	}
	err := f.run.close()
	f.run = nil
	return err
}
