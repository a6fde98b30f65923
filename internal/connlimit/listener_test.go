package connlimit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// serve runs an http.Server with the limiter on a loopback port. /block
// waits until release is closed.
var blocked sync.WaitGroup // counts requests inside /block

func serve(t *testing.T, maxConns, reserve int, bodyTimeout time.Duration) (addr string, l *Listener, release chan struct{}) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l = New(inner, maxConns, reserve)
	release = make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) {
		blocked.Done()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "released")
	})
	mux.HandleFunc("/echo-late", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		time.Sleep(3 * bodyTimeout) // a long poll after the body: not cut off
		if r.Context().Err() != nil {
			return
		}
		w.Write(b)
	})
	hs := &http.Server{Handler: Guard(BodyDeadline(bodyTimeout, mux)), ConnState: l.ConnState, ConnContext: l.ConnContext}
	go hs.Serve(l)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		hs.Close()
	})
	return inner.Addr().String(), l, release
}

// rawConn is one client connection speaking HTTP/1.1 by hand.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{c: c, br: bufio.NewReader(c)}
}

func (rc *rawConn) get(path string) (int, string, error) {
	if _, err := fmt.Fprintf(rc.c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func waitOpen(t *testing.T, l *Listener, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for l.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want %d", l.Open(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With every slot held by an idle keep-alive connection, a new client still
// gets in: the connection idle the longest makes room.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	addr, l, _ := serve(t, 4, 1, time.Second)
	var idle []*rawConn
	for range 4 {
		rc := dial(t, addr)
		if code, _, err := rc.get("/hello"); err != nil || code != 200 {
			t.Fatalf("keep-alive request: %d %v", code, err)
		}
		idle = append(idle, rc)
	}
	waitOpen(t, l, 4)
	for i := range 3 {
		rc := dial(t, addr)
		if code, body, err := rc.get("/hello"); err != nil || code != 200 || body != "hello" {
			t.Fatalf("new client %d with every slot idle: %d %q %v", i, code, body, err)
		}
	}
	closed := 0
	for _, rc := range idle {
		if _, _, err := rc.get("/hello"); err != nil {
			closed++
		}
	}
	if closed < 3 {
		t.Errorf("%d of the 4 idle connections were closed to admit 3 new ones", closed)
	}
	if n := l.Open(); n > 4 {
		t.Errorf("%d connections open, cap 4", n)
	}
}

// With every slot busy, reserve connections reach /healthz and nothing
// else; past the reserve a connection is closed at once.
func TestBusySlotsLeaveTheReserveToHealthChecks(t *testing.T) {
	addr, l, release := serve(t, 3, 1, time.Second)
	var wg sync.WaitGroup
	blocked.Add(3)
	for range 3 {
		rc := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, err := rc.get("/block"); err != nil || code != 200 || body != "released" {
				t.Errorf("blocked request: %d %q %v", code, body, err)
			}
		}()
	}
	blocked.Wait() // every slot is busy with a request
	waitOpen(t, l, 3)
	reserve := dial(t, addr)
	if code, body, err := reserve.get("/healthz"); err != nil || code != 200 || body != "ok" {
		t.Fatalf("/healthz on the reserve: %d %q %v", code, body, err)
	}
	if code, body, err := reserve.get("/hello"); err != nil || code != 503 || !strings.Contains(body, "overloaded") {
		t.Fatalf("/hello on the reserve: %d %q %v", code, body, err)
	}
	waitOpen(t, l, 3) // the 503 closed the reserve connection
	held := dial(t, addr)
	if code, _, err := held.get("/healthz"); err != nil || code != 200 {
		t.Fatalf("second reserve /healthz: %d %v", code, err)
	}
	over := dial(t, addr)
	if _, _, err := over.get("/healthz"); err == nil {
		t.Error("a connection past the reserve was served")
	}
	close(release)
	wg.Wait()
}

// A body that trickles in is cut off after the body timeout; a handler that
// waits after reading its body is not.
func TestBodyDeadline(t *testing.T) {
	addr, _, _ := serve(t, 10, 1, 300*time.Millisecond)
	slow := dial(t, addr)
	fmt.Fprintf(slow.c, "POST /echo-late HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx")
	start := time.Now()
	resp, err := http.ReadResponse(slow.br, nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatalf("a 1-of-100-byte body was answered 200")
		}
	}
	if waited := time.Since(start); waited > 8*time.Second {
		t.Fatalf("the slow body held the connection %s", waited)
	}
	fast := dial(t, addr)
	fmt.Fprintf(fast.c, "POST /echo-late HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	resp, err = http.ReadResponse(fast.br, nil)
	if err != nil {
		t.Fatalf("a handler waiting after its body was cut off: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello" {
		t.Fatalf("after the wait: %d %q", resp.StatusCode, b)
	}
}
