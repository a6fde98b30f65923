package instance

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/connlimit"
)

// Connection timeouts that are not configurable.
const (
	headerTimeout = 10 * time.Second // the request line and headers must arrive within this
	reserveConns  = 4                // connections beyond the cap that may reach /healthz and /readyz
)

// HTTPServer builds the HTTP server of `fairway server` on inner: headers
// within headerTimeout, bodies within cfg.BodyTimeout, idle keep-alive
// connections closed after cfg.IdleTimeout, and at most cfg.MaxConnections
// connections (connlimit) with a reserve for health checks. Long polls and
// log streams are not bounded by any of these: their handlers bound
// themselves (wait_ms, the job's end).
func HTTPServer(cfg config.Server, inner net.Listener, h http.Handler, log *slog.Logger) (*http.Server, net.Listener) {
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
	return hs, ln
}

// Bind listens on addr before anything else is set up (the data directory
// is not created for a server that cannot listen). An address in use is
// explained, with the flag that picks another.
func Bind(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: the address is already in use (by another fairway server or another program); "+
			"pick another with --listen, e.g. --listen %s", addr, nextPort(addr))
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (set the address with --listen or server.listen)", addr, err)
	}
	return ln, nil
}

// nextPort is addr with the port after its own, for an example.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return "127.0.0.1:7071"
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}
