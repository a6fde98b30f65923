package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/gcfloor"
	"github.com/fairwayhq/fairway/internal/instance"
)

func init() {
	commands["server"] = command{summary: "run the job server (HTTP API; SQLite, or PostgreSQL with --store)", run: runServer}
}

// serverFlags are shared by `server` and `dev`.
type serverFlags struct {
	configPath string
	listen     string
	dataDir    string
	storeURL   string
	logLevel   string
	insecure   bool
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.configPath, "config", "", "YAML config file (lanes, tiers, types, tenants); default: built-in defaults")
	fs.StringVar(&f.listen, "listen", "", "address to listen on (default from config, else 127.0.0.1:7070)")
	fs.StringVar(&f.dataDir, "data", "", "data directory for the SQLite store (default from config, else ./fairway-data)")
	fs.StringVar(&f.storeURL, "store", "", "a postgres:// `URL` to keep the state in PostgreSQL instead (default from config, else SQLite in --data)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&f.insecure, "insecure", false, "allow a non-loopback --listen with no API keys configured (anyone who reaches it is admin)")
}

func (f *serverFlags) load() (config.Config, error) {
	cfg := config.Default()
	if f.configPath != "" {
		var err error
		if cfg, err = config.LoadFile(f.configPath); err != nil {
			return cfg, err
		}
	}
	if f.listen != "" {
		cfg.Server.Listen = f.listen
	}
	if f.dataDir != "" {
		cfg.Server.DataDir = f.dataDir
	}
	if f.storeURL != "" {
		cfg.Server.Store = f.storeURL
	}
	return cfg, checkStoreURL(cfg.Server.Store)
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

const serverAbout = `Runs the durable job server: the HTTP API (jobs, workers, logs, explain),
the scheduler that leases jobs to pull workers, and the store (SQLite in
--data, or PostgreSQL with --store postgres://...). It runs no jobs itself: start workers with 'fairway worker'.
Ctrl-C or SIGTERM stops it gracefully. See docs/operations.md.`

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var f serverFlags
	f.register(fs)
	if code := parseCommandFlags(fs, "[flags]", serverAbout, args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fairway server: unexpected argument %q\nRun 'fairway server -h' for usage.\n", fs.Arg(0))
		return exitUsage
	}
	cfg, err := f.load()
	if err != nil {
		fmt.Fprintf(stderr, "fairway server: %v\n", err)
		return 2
	}
	log, err := newLogger(stderr, f.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "fairway server: %v\n", err)
		return 2
	}
	if err := f.guardExposure(cfg, log); err != nil {
		fmt.Fprintf(stderr, "fairway server: %v\n", err)
		return 2
	}
	if err := serve(ctx, cfg, log, func(addr, where string) {
		fmt.Fprintf(stdout, "fairway server listening on http://%s (%s); web UI at http://%s/\n", addr, where, addr)
	}); err != nil {
		fmt.Fprintf(stderr, "fairway server: %v\n", err)
		return 1
	}
	return 0
}

// gcFloor is the server's GC floor: server.gc_floor, lowered on a machine
// whose memory limits are small (gcfloor.Capped), which it logs.
func gcFloor(cfg config.Server, log *slog.Logger) int64 {
	floor, why := gcfloor.Capped(cfg.GCFloorBytes())
	if why != "" {
		log.Info("gc floor lowered", "floor", config.ByteSize(floor).String(),
			"configured", config.ByteSize(cfg.GCFloorBytes()).String(), "by", why)
	}
	return floor
}

// serve runs the server until ctx ends, then shuts down gracefully.
// ready gets the address listened on and where the state is kept. The
// instance is assembled by package instance, as an embedded one is.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(addr, where string)) error {
	inner, err := instance.Bind(cfg.Server.Listen)
	if err != nil {
		return err
	}
	defer inner.Close()
	defer gcfloor.Start(gcFloor(cfg.Server, log))()
	advertise := cfg.Server.Advertise
	if advertise == "" {
		advertise = inner.Addr().String()
	}
	inst, err := instance.Open(ctx, instance.Options{Config: cfg, Logger: log, Advertise: advertise})
	if err != nil {
		return err
	}
	defer inst.Close()
	hs, ln := instance.HTTPServer(cfg.Server, inner, inst.Handler(), log)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	ready(ln.Addr().String(), inst.Where())
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	inst.Stop() // on PostgreSQL the term is resigned: a standby takes over at once
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil && !errors.Is(serr, context.DeadlineExceeded) && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
