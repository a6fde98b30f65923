//go:build linux

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		helperWorker()
		return
	}
	// As fairway worker does: orphans of jobs are re-parented to this
	// process, where killOrphans finds them without scanning /proc.
	if err := SetSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "SetSubreaper:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// recorder is an Output that keeps everything and can act on markers.
type recorder struct {
	mu       sync.Mutex
	data     map[Stream]*bytes.Buffer
	chunks   map[Stream][][]byte
	triggers []*trigger
	after    bool // set once Run returned: a Write then is a bug
	late     bool
}

type trigger struct {
	stream Stream
	marker []byte
	fn     func()
	fired  bool
}

func newRecorder() *recorder {
	return &recorder{data: map[Stream]*bytes.Buffer{Stdout: {}, Stderr: {}}, chunks: map[Stream][][]byte{}}
}

func (r *recorder) Write(s Stream, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.after {
		r.late = true
	}
	r.data[s].Write(p)
	r.chunks[s] = append(r.chunks[s], bytes.Clone(p))
	for _, t := range r.triggers {
		if !t.fired && t.stream == s && bytes.Contains(r.data[s].Bytes(), t.marker) {
			t.fired = true
			t.fn()
		}
	}
}

// on calls fn (from inside Write) once marker has appeared on stream.
func (r *recorder) on(s Stream, marker string, fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.triggers = append(r.triggers, &trigger{stream: s, marker: []byte(marker), fn: fn})
}

func (r *recorder) String(s Stream) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.data[s].String()
}

func (r *recorder) Chunks(s Stream) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.chunks[s]
}

// run calls Run and checks that Output is not called after it returned.
func run(t *testing.T, ctx context.Context, spec Spec) (Result, *recorder) {
	t.Helper()
	rec := newRecorder()
	res := Run(ctx, spec, rec)
	rec.mu.Lock()
	rec.after = true
	rec.mu.Unlock()
	t.Cleanup(func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.late {
			t.Error("Output.Write called after Run returned")
		}
	})
	return res, rec
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func wantClass(t *testing.T, res Result, class FailureClass, sentinel error) {
	t.Helper()
	if res.Class != class {
		t.Fatalf("Class = %q, want %q (result %+v)", res.Class, class, res)
	}
	if sentinel == nil && res.Err != nil {
		t.Fatalf("Err = %v, want nil", res.Err)
	}
	if sentinel != nil && !errors.Is(res.Err, sentinel) {
		t.Fatalf("Err = %v, want it to wrap %v", res.Err, sentinel)
	}
}

// readPid reads the pid a child wrote to dir/name.
func readPid(t *testing.T, dir, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %q: %v", data, err)
	}
	return pid
}

// waitGone waits, bounded, until pid is gone or a zombie (a reparented
// zombie is init's to reap, not ours): SIGKILL is delivered asynchronously.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive: %s", pid, procState(pid))
		}
		<-tick.C
	}
}

func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	st := procState(pid)
	return st == "" || st == "Z" || st == "X"
}

// procState returns the state letter from /proc/pid/stat, "" if gone.
func procState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) || err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return ""
	}
	return string(data[i+2])
}
