package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func init() {
	commands["dev"] = command{summary: "server + one local worker + SQLite in ./fairway-data, in one command", run: runDev}
}

const devAbout = `Starts a fairway server on SQLite in ./fairway-data and one local worker
that offers this machine's CPUs and memory and runs any job type (shell
jobs included), for trying fairway on one machine with nothing else
installed. Ctrl-C stops both: running jobs may finish first; a second
Ctrl-C stops them at once and hands them back without charging an attempt.`

// runDev starts the server and, as a child process, one worker that runs
// every job type, then prints what to try next. Ctrl-C stops both.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	var f serverFlags
	f.register(fs)
	slots := fs.Int("slots", runtime.NumCPU(), "slots of the local worker")
	var res devResources
	res.register(fs)
	if code := parseCommandFlags(fs, "[flags]", devAbout, args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fairway dev: unexpected argument %q\nRun 'fairway dev -h' for usage.\n", fs.Arg(0))
		return exitUsage
	}
	cfg, err := f.load()
	if err != nil {
		fmt.Fprintf(stderr, "fairway dev: %v\n", err)
		return 2
	}
	if f.configPath == "" {
		for name, t := range cfg.Types {
			t.AllowShell = true
			cfg.Types[name] = t
		}
		cfg.Server.ShellForUnknownTypes = true
	}
	log, err := newLogger(stderr, f.logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "fairway dev: %v\n", err)
		return 2
	}
	if err := f.guardExposure(cfg, log); err != nil {
		fmt.Fprintf(stderr, "fairway dev: %v\n", err)
		return 2
	}
	// The worker stops first (it drains and deregisters), then the server.
	workerCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	serverCtx, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	var wg sync.WaitGroup
	wg.Add(1) // the worker; released by its goroutine, or below if it never starts
	var started atomic.Bool
	ready := func(addr, where string) {
		started.Store(true)
		url := "http://" + addr
		printDevHint(stdout, url, where)
		go func() {
			defer wg.Done()
			defer stopServer()
			if err := runDevWorker(workerCtx, url, *slots, res, stderr); err != nil && workerCtx.Err() == nil {
				fmt.Fprintf(stderr, "fairway dev: worker: %v\n", err)
			}
		}()
	}
	go func() {
		<-workerCtx.Done()
		if !started.Load() {
			stopServer() // no worker to wait for
		}
	}()
	err = serve(serverCtx, cfg, log, ready)
	cancel()
	if !started.Load() {
		wg.Done()
	}
	wg.Wait()
	if err != nil {
		fmt.Fprintf(stderr, "fairway dev: %v\n", err)
		return 1
	}
	return 0
}

// runDevWorker runs `fairway worker` as a child process and stops it with
// SIGTERM (its graceful drain) when ctx ends.
func runDevWorker(ctx context.Context, url string, slots int, res devResources, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.Command(exe, "worker", "--server", url, "--name", "dev-worker", "--slots", strconv.Itoa(slots), "--allow-shell",
		"--cpu", strconv.FormatFloat(res.cpu, 'f', -1, 64), "--memory-mb", strconv.FormatInt(res.memoryMB, 10), "--gpu", strconv.FormatInt(res.gpu, 10))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	// Its own process group, so that a Ctrl-C reaches it only as dev
	// forwards it: once to drain, twice to stop now.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return fmt.Errorf("worker exited: %w", err)
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	fmt.Fprintln(stderr, "fairway dev: stopping: the worker lets running jobs finish (up to 30s); press Ctrl-C again to stop them now (they go back to pending, uncharged)")
	select {
	case err := <-done:
		return workerExit(err)
	case <-forced(ctx):
		_ = cmd.Process.Signal(syscall.SIGTERM) // the worker's second signal: abort the drain
	case <-time.After(35 * time.Second):
		_ = cmd.Process.Kill()
		return <-done
	}
	select {
	case err := <-done:
		return workerExit(err)
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		return <-done
	}
}

// workerExit is nil for the worker's exit after a stop, whatever its code
// (it exits 1 when it had to cancel jobs).
func workerExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}

// printDevHint says what runs and what to try; where is the store
// ("data in DIR" or the PostgreSQL URL).
func printDevHint(w io.Writer, url, where string) {
	fmt.Fprintf(w, `fairway dev: server on %[1]s, one local worker, %[2]s
Web UI: %[1]s/ (open mode: no sign-in)

Try, in another terminal (from the repository, build the binary once:
make build && export PATH="$PWD/bin:$PATH", or go install ./cmd/fairway):
  export FAIRWAY_SERVER=%[1]s
  fairway submit --wait demo -- sh -c 'echo hello from fairway; sleep 1; echo done'
  id=$(fairway submit --run-at +10m demo -- echo later)
  fairway list
  fairway explain "$id"
  fairway workers
  fairway lanes
API: %[1]s/api/v1/openapi.json   Stop with Ctrl-C.
`, url, where)
}
