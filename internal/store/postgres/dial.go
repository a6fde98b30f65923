package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Network bounds of every connection to the database (doc.go, "Silent
// networks"): a database that vanishes without closing anything (a
// partition, a host gone) is noticed within them, not when the kernel
// gives up after many minutes.
const (
	// ConnectTimeout bounds a connection's dial and start-up, unless the
	// URL sets connect_timeout.
	ConnectTimeout = 5 * time.Second
	// keepAliveIdle, keepAliveInterval and keepAliveCount: an idle
	// connection is probed after 5 s, and given up after 3 probes 2 s
	// apart unanswered.
	keepAliveIdle     = 5 * time.Second
	keepAliveInterval = 2 * time.Second
	keepAliveCount    = 3
	// UserTimeout is TCP_USER_TIMEOUT (Linux): a connection whose sent
	// data stays unacknowledged this long is closed.
	UserTimeout = 10 * time.Second
)

// OpenDB opens a database/sql pool on the pgx driver for url, with the
// network bounds above. It does not connect.
func OpenDB(url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: bad URL: %w", err)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = ConnectTimeout
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount},
		Control:         setUserTimeout(UserTimeout),
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return stdlib.OpenDB(*cfg), nil
}
