package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

var binary string // the fairway binary, built by TestMain

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fairway-e2e-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "fairway")
	build := exec.Command("go", "build", "-o", binary, "github.com/fairwayhq/fairway/cmd/fairway")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fairway:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a child process with its combined output kept for failures.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
}

func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("--- %s output ---\n%s", name, p.output())
		}
	})
	return p
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// kill SIGKILLs the process group and waits for it.
func (p *proc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and waits up to 40 s for a graceful exit.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		p.t.Errorf("%s did not stop on SIGTERM", p.name)
		p.kill()
	}
}

// cluster is a server process plus the client that talks to it.
type cluster struct {
	t      *testing.T
	dir    string
	addr   string
	config string
	server *proc
	c      *client.Client
}

func newCluster(t *testing.T, configYAML string) *cluster {
	t.Helper()
	cl := &cluster{t: t, dir: t.TempDir(), addr: freeAddr(t)}
	cl.config = filepath.Join(cl.dir, "fairway.yaml")
	if err := os.WriteFile(cl.config, []byte(configYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := client.New("http://" + cl.addr)
	if err != nil {
		t.Fatal(err)
	}
	cl.c = c
	cl.startServer()
	return cl
}

// freeAddr is a loopback address whose port no one listens on now, for a
// server process started later. The port is drawn below Linux's
// ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by
// default): a port the kernel picked for "127.0.0.1:0" was free only
// until the child bound it, and in between any outgoing connection or
// ":0" listener (a fault proxy's, say) could be given the same port
// ("address already in use" in a test that then failed for nothing).
// Below that range only another caller drawing the same port can take
// it.
func freeAddr(t *testing.T) string {
	for range 100 {
		port := lowPortMin + rand.IntN(lowPortMax-lowPortMin+1)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: draw again
		}
		addr := ln.Addr().String()
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		return addr
	}
	t.Fatal("freeAddr: no free port below the ephemeral range after 100 draws")
	return ""
}

// The ports freeAddr draws from: below the ephemeral range, above the
// ports services commonly use.
const lowPortMin, lowPortMax = 20000, 32767

func (cl *cluster) startServer() {
	cl.t.Helper()
	cl.server = start(cl.t, "server", "server", "--config", cl.config, "--listen", cl.addr, "--data", filepath.Join(cl.dir, "data"))
	cl.waitReady()
}

func (cl *cluster) waitReady() {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if cl.c.Ready(ctx) == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	cl.t.Fatalf("server not ready:\n%s", cl.server.output())
}

func (cl *cluster) worker(name string, args ...string) *proc {
	cl.t.Helper()
	all := append([]string{"worker", "--server", "http://" + cl.addr, "--name", name}, args...)
	return start(cl.t, name, all...)
}

func (cl *cluster) submit(spec api.JobSpec) api.Job {
	cl.t.Helper()
	r, err := cl.c.Submit(context.Background(), spec)
	if err != nil {
		cl.t.Fatalf("submit: %v", err)
	}
	return r.Job
}

// wait waits for a job to end, bounded.
func (cl *cluster) wait(id string, within time.Duration) api.Job {
	cl.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	j, err := cl.c.Wait(ctx, id)
	if err != nil {
		cur, _ := cl.c.Get(context.Background(), id)
		cl.t.Fatalf("wait %s: %v (job now %+v)", id, err, cur.Job)
	}
	return j
}

// eventually polls cond until it holds or the bound passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", within, what)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie (state Z) no longer runs.
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}
