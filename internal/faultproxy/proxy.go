// Package faultproxy is a TCP proxy for tests that fails the way networks
// do: by silence (a blackhole holds every byte both ways and closes
// nothing: no FIN, no RST), by dropping every connection at once, or by
// refusing new ones. The partition, outage and failover tests put one
// between a fairway instance and PostgreSQL. It listens on 127.0.0.1 only
// and stops when its test ends.
package faultproxy

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards the TCP connections made to Addr to a target.
type Proxy struct {
	ln     net.Listener
	target string
	hold   atomic.Bool // blackhole: bytes stop flowing both ways
	refuse atomic.Bool // new connections are closed at once
	mu     sync.Mutex
	conns  []net.Conn
}

// Start listens on a port of 127.0.0.1 chosen by the OS and forwards to
// target until t ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.stop)
	return p
}

// Addr is host:port to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole holds every byte both ways, closing nothing, until Heal.
func (p *Proxy) Blackhole() { p.hold.Store(true) }

// Cut closes every connection the proxy carries now (the host vanishing
// mid-answer); new connections are accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Refuse closes every connection and refuses new ones until Heal.
func (p *Proxy) Refuse() {
	p.refuse.Store(true)
	p.Cut()
}

// Heal ends a blackhole or a refusal.
func (p *Proxy) Heal() {
	p.hold.Store(false)
	p.refuse.Store(false)
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies src to dst, holding what it read while blackholed.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.hold.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.Close()
			}
			return
		}
	}
}

func (p *Proxy) stop() {
	p.ln.Close()
	p.Heal()
	p.Cut()
}

// StartFor proxies the host of the URL raw (a database URL) and returns
// the proxy and raw with its host replaced by the proxy's.
func StartFor(t testing.TB, raw string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := Start(t, u.Host)
	return p, p.Via(t, raw)
}

// Via is the URL raw with its host replaced by the proxy's.
func (p *Proxy) Via(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr()
	return u.String()
}
