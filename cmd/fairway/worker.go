package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/runner"
	"github.com/fairwayhq/fairway/worker"
)

func init() {
	commands["worker"] = command{summary: "run jobs: register with a server, lease, run commands, report", run: runWorker}
}

const workerAbout = `Registers with the server as a fresh worker and runs the jobs it leases:
each job's command runs as a child process in its own process group, its
stdout and stderr are streamed to the server, and its outcome is reported.
SIGTERM or Ctrl-C stops it gracefully: no new jobs, running ones get
--drain-timeout to finish, then are stopped and handed back. See
docs/worker.md.`

// workerFlags are the worker subcommand's options.
type workerFlags struct {
	server, apiKey, name   string
	types, labels          string
	slots                  int
	cpu                    float64
	memoryMB, gpu          int64
	drain, killGrace       time.Duration
	allowShell, inheritEnv bool
	jobCgroups             bool
	logLevel               string
	snoozeExitCode         int
}

func (f *workerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "server `URL`; several instances comma-separated (default $"+envServer+", else "+defaultServer+")")
	fs.StringVar(&f.apiKey, "api-key", "", "worker or admin API `key` (default $"+envAPIKey+")")
	fs.StringVar(&f.name, "name", "", "worker name shown by 'fairway workers' (default hostname-pid)")
	fs.StringVar(&f.types, "types", "", "comma-separated job `types` to run (default: every type)")
	fs.StringVar(&f.labels, "labels", "", "comma-separated `labels` this worker offers")
	fs.IntVar(&f.slots, "slots", runtime.NumCPU(), "jobs run at once")
	fs.Float64Var(&f.cpu, "cpu", 0, "CPU `cores` offered to the scheduler")
	fs.Int64Var(&f.memoryMB, "memory-mb", 0, "memory offered to the scheduler, in `MiB`")
	fs.Int64Var(&f.gpu, "gpu", 0, "GPUs offered to the scheduler")
	fs.DurationVar(&f.drain, "drain-timeout", worker.DefaultDrainTimeout, "on SIGTERM, how long running jobs may finish before they are stopped")
	fs.DurationVar(&f.killGrace, "kill-grace", 5*time.Second, "time between SIGTERM and SIGKILL when a job is stopped")
	fs.BoolVar(&f.allowShell, "allow-shell", false, "run jobs that ask for a shell (/bin/sh -c); refused otherwise")
	fs.BoolVar(&f.inheritEnv, "inherit-env", false, "give jobs the worker's whole environment (default: PATH, HOME, LANG, TMPDIR and the job's env)")
	fs.BoolVar(&f.jobCgroups, "job-cgroups", true, "run each job in a cgroup v2 of its own where the worker may create one (else: its process group, and its orphans by marker)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.IntVar(&f.snoozeExitCode, "snooze-exit-code", worker.DefaultSnoozeExitCode,
		"exit `code` with which a job that wrote a delay (5m, or seconds) to $FAIRWAY_SNOOZE_FILE snoozes: it runs again after the delay, uncharged; -1: off")
}

func (f *workerFlags) check() error {
	switch {
	case f.slots < 1:
		return fmt.Errorf("--slots: must be at least 1, got %d", f.slots)
	case f.cpu < 0 || f.memoryMB < 0 || f.gpu < 0:
		return errors.New("--cpu, --memory-mb and --gpu must not be negative")
	case f.drain <= 0:
		return fmt.Errorf("--drain-timeout: must be positive, got %s", f.drain)
	case f.killGrace <= 0:
		return fmt.Errorf("--kill-grace: must be positive, got %s", f.killGrace)
	case f.snoozeExitCode != -1 && (f.snoozeExitCode < 1 || f.snoozeExitCode > 255):
		return fmt.Errorf("--snooze-exit-code: must be an exit code from 1 to 255, or -1 for none, got %d", f.snoozeExitCode)
	}
	return nil
}

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseWorkerFlags(args, stderr)
	if code >= 0 {
		return code
	}
	log := f.logger(stderr)
	cgroupParent := containJobProcesses(log, f.jobCgroups)
	opts, err := f.options(log, cgroupParent)
	if err != nil {
		fmt.Fprintf(stderr, "fairway worker: %v\n", err)
		return 2
	}
	w, err := worker.New(opts)
	if err != nil {
		fmt.Fprintf(stderr, "fairway worker: %v\n", err)
		return 2
	}
	done := make(chan struct{})
	defer close(done)
	go abortOnSecondInterrupt(ctx, w, stderr, done)
	if err := w.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "fairway worker: %v\n", err)
		return 1
	}
	return 0
}

// parseWorkerFlags returns code -1 to go on, else the exit code to stop
// with.
func parseWorkerFlags(args []string, stderr io.Writer) (workerFlags, int) {
	var f workerFlags
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	f.register(fs)
	if code := parseCommandFlags(fs, "[flags]", workerAbout, args, stderr); code >= 0 {
		return f, code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fairway worker: unexpected argument %q\nRun 'fairway worker -h' for usage.\n", fs.Arg(0))
		return f, 2
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "fairway worker: %v\n", err)
		return f, 2
	}
	if err := new(slog.Level).UnmarshalText([]byte(f.logLevel)); err != nil {
		fmt.Fprintf(stderr, "fairway worker: --log-level: %v\n", err)
		return f, 2
	}
	return f, -1
}

// logger is the worker's log on stderr, at --log-level (checked by
// parseWorkerFlags).
func (f *workerFlags) logger(stderr io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(f.logLevel))
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("component", "worker")
}

// options builds the worker's Options: one handler for every type, running
// the job's command.
func (f *workerFlags) options(log *slog.Logger, cgroupParent string) (worker.Options, error) {
	server := firstNonEmpty(f.server, os.Getenv(envServer), defaultServer)
	c, err := client.New(server, client.WithAPIKey(firstNonEmpty(f.apiKey, os.Getenv(envAPIKey))),
		client.WithUserAgent("fairway-worker/1"))
	if err != nil {
		return worker.Options{}, fmt.Errorf("--server: %w", err)
	}
	run := worker.CommandHandler(worker.CommandOptions{
		AllowShell: f.allowShell, InheritEnv: f.inheritEnv, KillGrace: f.killGrace, SnoozeExitCode: f.snoozeExitCode,
		CgroupParent: cgroupParent,
	})
	return worker.Options{
		Client: c, Name: f.name, Types: splitList(f.types), Labels: splitList(f.labels),
		Slots: f.slots, CPU: f.cpu, MemoryMB: f.memoryMB, GPU: f.gpu,
		Handlers:     map[string]worker.Handler{"*": run},
		DrainTimeout: f.drain,
		Logger:       log,
	}, nil
}

// abortOnSecondInterrupt says, at the first interrupt, how to skip the
// drain, and aborts it at the second.
func abortOnSecondInterrupt(ctx context.Context, w *worker.Worker, stderr io.Writer, done <-chan struct{}) {
	select {
	case <-ctx.Done():
	case <-done:
		return
	}
	fmt.Fprintln(stderr, "fairway worker: stopping: running jobs may finish (--drain-timeout); Ctrl-C or SIGTERM again stops them now and hands them back uncharged")
	select {
	case <-forced(ctx):
		fmt.Fprintln(stderr, "fairway worker: stopping now: killing the running jobs and handing them back")
		w.Abort()
	case <-done:
	}
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// containJobProcesses makes the worker the subreaper of its jobs'
// descendants, so none is re-parented past it to init, and kills what jobs
// of a worker that died without cleaning up (SIGKILL) left running on this
// machine (runner.SweepOrphans, runner.SweepCgroups). With cgroups it
// returns the cgroup under which each job gets its own, or "" where the
// worker may not create one there.
func containJobProcesses(log *slog.Logger, cgroups bool) string {
	if err := runner.SetSubreaper(); err != nil {
		log.Warn("cannot become the subreaper of job processes", "err", err)
	}
	if n := runner.SweepOrphans(); n > 0 {
		log.Warn("killed processes left by jobs of a worker that died", "processes", n)
	}
	if !cgroups {
		return ""
	}
	parent, err := runner.JobCgroupParent()
	if err != nil {
		log.Info("jobs run without a cgroup of their own: their process group and marked orphans are killed at their end", "reason", err)
		return ""
	}
	if n := runner.SweepCgroups(parent); n > 0 {
		log.Warn("removed job cgroups of a worker that died", "cgroups", n)
	}
	log.Debug("each job runs in a cgroup of its own", "parent", parent)
	return parent
}
