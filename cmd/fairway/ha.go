package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/ha"
	"github.com/fairwayhq/fairway/internal/leader"
	"github.com/fairwayhq/fairway/internal/store/postgres"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// serveHA runs this process as one instance on a PostgreSQL store: a
// standby until it wins the leadership, then the server (package ha).
func serveHA(ctx context.Context, cfg config.Config, log *slog.Logger, inner net.Listener, tracer *tracing.Tracer, ready func(addr, where string)) error {
	addr := cfg.Server.Advertise
	if addr == "" {
		addr = inner.Addr().String()
	}
	node, err := ha.New(ctx, ha.Options{
		URL: cfg.Server.Store, Config: cfg, Logger: log,
		Lease:  leader.Lease{Holder: instanceID(), Address: addr, TTL: cfg.Server.LeaderTTL.D()},
		Tracer: tracer,
	})
	if err != nil {
		return err
	}
	hs, ln := listenHTTP(cfg.Server, inner, node.Handler(), log)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	ready(ln.Addr().String(), "store "+postgres.Redact(cfg.Server.Store))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		node.Run(runCtx)
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	stop()
	<-done // the term, if any, is resigned: a standby takes over at once
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

// instanceID names this process start among the instances: host and a
// random suffix.
func instanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}
