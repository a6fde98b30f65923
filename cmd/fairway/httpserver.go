package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/connlimit"
)

// Connection timeouts that are not configurable.
const (
	headerTimeout = 10 * time.Second // the request line and headers must arrive within this
	reserveConns  = 4                // connections beyond the cap that may reach /healthz and /readyz
)

// listenHTTP listens on cfg.Listen and builds the HTTP server: headers
// within headerTimeout, bodies within cfg.BodyTimeout, idle keep-alive
// connections closed after cfg.IdleTimeout, and at most cfg.MaxConnections
// connections (connlimit) with a reserve for health checks. Long polls and
// log streams are not bounded by any of these: their handlers bound
// themselves (wait_ms, the job's end).
func listenHTTP(cfg config.Server, h http.Handler, log *slog.Logger) (*http.Server, net.Listener, error) {
	inner, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	maxConns := cfg.MaxConnections
	if maxConns == 0 {
		maxConns = connlimit.DefaultMax()
	}
	ln := connlimit.New(inner, maxConns, reserveConns)
	hs := &http.Server{
		Handler:           connlimit.Guard(connlimit.BodyDeadline(cfg.BodyTimeout.D(), h)),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       cfg.IdleTimeout.D(),
		ConnState:         ln.ConnState,
		ConnContext:       ln.ConnContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("http limits", "max_connections", maxConns, "idle_timeout", cfg.IdleTimeout.D(), "body_timeout", cfg.BodyTimeout.D())
	return hs, ln, nil
}
