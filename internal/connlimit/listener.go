package connlimit

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// Listener admits at most Max connections, plus Reserve for health checks.
type Listener struct {
	net.Listener
	max, reserve int

	mu    sync.Mutex
	conns map[*conn]struct{}
}

// conn is an admitted connection.
type conn struct {
	net.Conn
	l         *Listener
	reserve   bool
	idleSince time.Time // zero while a request is under way
	closeOnce sync.Once
}

// New wraps inner. max is the number of connections served normally,
// reserve the extra ones that may reach the health routes only.
func New(inner net.Listener, max, reserve int) *Listener {
	return &Listener{Listener: inner, max: max, reserve: reserve, conns: map[*conn]struct{}{}}
}

// DefaultMax is the connection cap for this process: its RLIMIT_NOFILE less
// headroom for the store's files, the listener and the reserve, at most
// 10,000 and at least 16.
func DefaultMax() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == 0 {
		return 1000
	}
	const headroom = 64
	n := int(min(lim.Cur, 1<<20)) - headroom
	return max(16, min(n, 10000))
}

// Accept returns the next connection it admits.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit applies the three rules of the package doc; nil means nc was
// closed.
func (l *Listener) admit(nc net.Conn) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &conn{Conn: nc, l: l, idleSince: time.Now()}
	if len(l.conns) >= l.max {
		if oldest := l.oldestIdleLocked(); oldest != nil {
			delete(l.conns, oldest)
			// Closed before the new connection is admitted, so that no
			// request on the evicted one is served past the cap (closing
			// a socket does not block).
			_ = oldest.Conn.Close()
		} else if len(l.conns) < l.max+l.reserve {
			c.reserve = true
		} else {
			nc.Close()
			return nil
		}
	}
	l.conns[c] = struct{}{}
	return c
}

func (l *Listener) oldestIdleLocked() *conn {
	var oldest *conn
	for c := range l.conns {
		if c.idleSince.IsZero() || c.reserve {
			continue
		}
		if oldest == nil || c.idleSince.Before(oldest.idleSince) {
			oldest = c
		}
	}
	return oldest
}

// Open returns the number of connections held.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// ConnState is the http.Server hook that tells the listener which
// connections are idle.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateActive:
		c.idleSince = time.Time{}
	case http.StateIdle:
		c.idleSince = time.Now()
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	}
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}

type reserveKey struct{}

// ConnContext is the http.Server hook that marks the requests of a reserve
// connection for Guard.
func (l *Listener) ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if c, ok := nc.(*conn); ok && c.reserve {
		return context.WithValue(ctx, reserveKey{}, true)
	}
	return ctx
}

// Guard lets a reserve connection reach only the health routes; it answers
// anything else 503 and closes the connection.
func Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(reserveKey{}) == nil || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"overloaded","message":"the server holds its maximum of connections, all busy; retry shortly"}}` + "\n"))
	})
}
