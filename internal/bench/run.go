package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/gcfloor"
)

// Usage is the command's synopsis.
const Usage = `usage: fairway bench <workload> [flags]

workloads:
  drain     insert --jobs with the batch API, then time --concurrency workers until all are completed
  steady    --producers insert one job at a time for --duration while --concurrency workers run
  latency   one producer at --rate jobs/s for --duration, idle workers; submit->start latency
  priority  --low low-priority jobs, workers (--prio-concurrency) draining, then --high high-priority jobs
  all       the four above in turn
  schedules fairway's own: --schedules schedules each every --schedule-every, for --schedule-window;
            one line with slots, duplicates, missed and the lag from nominal time to job start
  commands  fairway's own: --jobs jobs running --command in a real 'fairway worker' process
            (--command-slots); jobs/s and CPU per job of the server, the worker and the commands

The server, the workers and the producers run in this process and talk HTTP
over 127.0.0.1; each run starts a fresh server on a new SQLite file.
Summary lines (key=value) go to stdout, progress to stderr prefixed "# ".
Run "fairway bench <workload> -h" for the flags.
`

// runConfig is everything the command line sets.
type runConfig struct {
	systems    string
	timeout    time.Duration
	maxRuntime time.Duration
	settle     time.Duration
	cpuProfile string
	memProfile string
	traceFile  string
	gcFloor    string
	logLevel   string
	memstats   bool
	cpustats   bool
	p          Params
	fw         FairwayOptions
}

func newFlagSet(name string, stderr io.Writer, c *runConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("fairway bench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	p, fw := &c.p, &c.fw
	// The flags shared with peerbench: same names, same defaults.
	fs.StringVar(&c.systems, "systems", "fairway", "systems to run (only fairway here; the flag is peerbench's)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "upper bound for one workload")
	fs.DurationVar(&c.maxRuntime, "max-runtime", 30*time.Minute, "hard upper bound for the whole process")
	fs.DurationVar(&c.settle, "settle", 2*time.Second, "pause between runs")
	fs.IntVar(&fw.Batch, "batch", 5000, "jobs per batch-insert call (the server takes at most 1000; larger values are capped)")
	fs.IntVar(&p.Jobs, "jobs", 50_000, "drain: jobs to insert")
	fs.IntVar(&p.Concurrency, "concurrency", 100, "drain/steady/latency: worker concurrency")
	fs.IntVar(&p.Producers, "producers", 8, "steady: producer goroutines")
	fs.DurationVar(&p.Duration, "duration", 10*time.Second, "steady/latency: how long to produce")
	fs.Float64Var(&p.Rate, "rate", 200, "latency: jobs per second")
	fs.IntVar(&p.Low, "low", 20_000, "priority: low-priority jobs")
	fs.IntVar(&p.High, "high", 200, "priority: high-priority jobs")
	fs.IntVar(&p.HighAfter, "high-after", 500, "priority: insert the high jobs once this many low jobs have started")
	fs.IntVar(&p.PrioConcurrency, "prio-concurrency", 10, "priority: worker concurrency")
	fs.DurationVar(&p.Warmup, "warmup", time.Second, "steady/latency: idle time after starting workers")
	fs.IntVar(&p.MaxJobs, "max-jobs", 1_000_000, "steady: bound on jobs inserted")
	fs.DurationVar(&p.DrainTimeout, "drain-timeout", 2*time.Minute, "bound on each wait for jobs to start / the queue to empty")
	fs.DurationVar(&p.StopTimeout, "stop-timeout", 10*time.Second, "bound on a graceful worker shutdown")
	fs.IntVar(&p.Schedules.Schedules, "schedules", 10_000, "schedules: how many schedules")
	fs.DurationVar(&p.Schedules.Every, "schedule-every", 10*time.Second, "schedules: each one's interval (phases spread over it)")
	fs.DurationVar(&p.Schedules.Window, "schedule-window", time.Minute, "schedules: how long the slots are counted")
	// fairway's own settings.
	registerCommandsFlags(fs, &p.Commands)
	fs.IntVar(&fw.InsertParallel, "insert-parallel", 2, "batch-insert requests in flight at once")
	fs.IntVar(&fw.Workers, "workers", 0, fmt.Sprintf("worker instances sharing the concurrency (0: %d)", defaultWorkers))
	fs.DurationVar(&fw.PollWait, "poll-wait", 0, "worker lease long-poll wait (0: the worker's default, 30s)")
	fs.DurationVar(&fw.BatchWindow, "batch-window", 0, "worker completion report batching window (0: the worker's default, 2ms, not waited for while every slot is taken; negative: none, send at once)")
	fs.StringVar(&fw.DataDir, "data-dir", "", "parent of the per-run data directories (default: the temp directory)")
	fs.StringVar(&fw.Store, "store", "", "a postgres:// `URL`: run the server on PostgreSQL instead of SQLite, as one instance that leads (every write fenced by its term); schema fairway_bench, or the URL's search_path, reset every run")
	fs.DurationVar(&fw.LeaderTTL, "leader-ttl", 0, "with --store: the leadership lease's length (0: server.leader_ttl's default); a leader that cannot renew within it steps down")
	fs.BoolVar(&fw.NoKeys, "no-keys", false, "the producers' client sends submits without the submit token it draws for each by default (client.WithoutGeneratedKeys), as the peers' inserts; a submit whose answer is lost is then not retried")
	fs.IntVar(&fw.PayloadBytes, "payload-bytes", 0, "pad every job's payload to about `N` bytes with random hex the handler ignores (0: the 30-byte payload)")
	fs.BoolVar(&fw.Embedded, "embedded", false, "run fairway embedded in this process (package embedded): producers and workers call the dispatcher directly, no HTTP; with --store too")
	fs.StringVar(&c.logLevel, "log-level", "warn", "level of the server's and workers' log on stderr")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&c.memProfile, "memprofile", "", "write the whole run's allocation profile (go tool pprof -sample_index=alloc_space) to this file at its end")
	fs.BoolVar(&c.memstats, "memstats", false, "drain: add the bytes and objects the whole process allocated per job in the insert and in the work phase (runtime.MemStats) to the summary line")
	fs.BoolVar(&c.cpustats, "cpustats", false, "drain: add the CPU per job of this process, of the whole machine (the database server's included) and of the rest, and the machine's busy share, in the insert and in the work phase (getrusage, /proc/stat; Linux only) to the summary line")
	fs.StringVar(&c.traceFile, "trace", "", "write a Go execution trace of the whole run to this file (go tool trace): where goroutines run and wait")
	fs.StringVar(&c.gcFloor, "gc-floor", config.DefaultGCFloor.String(),
		"the process's GC floor, as server.gc_floor sets it for fairway server (0: off, Go's default collector pacing)")
	return fs
}

// Main runs `fairway bench` with args (the workload, then flags) and
// returns the exit status: 0, 1 if a run reported status=error, 2 for a
// usage error. Past --max-runtime the process exits with status 3.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		fmt.Fprint(stderr, Usage)
		if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
			return 2
		}
		return 0
	}
	cmd := args[0]
	var selected []workload
	for _, w := range workloads {
		if cmd == w.name || cmd == "all" {
			selected = append(selected, w)
		}
	}
	for _, w := range fairwayWorkloads {
		if cmd == w.name {
			selected = append(selected, w)
		}
	}
	if len(selected) == 0 {
		fmt.Fprintf(stderr, "fairway bench: unknown workload %q\n\n%s", cmd, Usage)
		return 2
	}
	var c runConfig
	fs := newFlagSet(cmd, stderr, &c)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fairway bench: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if strings.TrimSpace(c.systems) != "fairway" {
		fmt.Fprintf(stderr, "fairway bench: --systems %q: only fairway is built in (run peerbench for the others)\n", c.systems)
		return 2
	}
	floor, err := config.ParseByteSize(c.gcFloor)
	if err != nil || floor < 0 {
		fmt.Fprintf(stderr, "fairway bench: --gc-floor %q: want a size such as 256MiB, or 0 for off\n", c.gcFloor)
		return 2
	}
	c.fw.GCFloor, _ = gcfloor.Capped(int64(floor))
	defer gcfloor.Start(c.fw.GCFloor)()
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		fmt.Fprintf(stderr, "fairway bench: --log-level: %v\n", err)
		return 2
	}
	out := &syncWriter{w: stderr}
	logf := func(format string, a ...any) { fmt.Fprintf(out, "# "+format+"\n", a...) }
	c.fw.Logger = slog.New(slog.NewTextHandler(&prefixWriter{w: out}, &slog.HandlerOptions{Level: level}))

	// Whatever happens, the process ends by itself.
	hard := time.AfterFunc(c.maxRuntime, func() {
		logf("fairway bench: --max-runtime %s exceeded, exiting", c.maxRuntime)
		os.Exit(3)
	})
	defer hard.Stop()
	ctx, cancel := context.WithTimeout(ctx, c.maxRuntime)
	defer cancel()

	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "fairway bench: --cpuprofile: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "fairway bench: --cpuprofile: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	if c.traceFile != "" {
		stop, err := startTrace(c.traceFile)
		if err != nil {
			fmt.Fprintf(stderr, "fairway bench: --trace: %v\n", err)
			return 2
		}
		defer stop()
	}
	status := runAll(ctx, &c, selected, NewFairway(c.fw), stdout, logf)
	if c.memProfile != "" {
		if err := writeAllocProfile(c.memProfile); err != nil {
			fmt.Fprintf(stderr, "fairway bench: --memprofile: %v\n", err)
			return 2
		}
	}
	return status
}

// writeAllocProfile writes the allocations sampled since the process
// started (every allocation site, with bytes and objects) to path.
func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write: %w", err)
	}
	return f.Close()
}

// runAll runs the selected workloads on sys in turn and prints one line
// each; it returns 1 if any reported status=error.
func runAll(ctx context.Context, c *runConfig, selected []workload, sys System, stdout io.Writer, logf func(string, ...any)) int {
	defer sys.Close()
	logf("fairway bench %s: GOMAXPROCS=%d NumCPU=%d (server, workers and producers share these CPUs)",
		strings.Join(names(selected), ","), runtime.GOMAXPROCS(0), runtime.NumCPU())
	ictx, icancel := context.WithTimeout(ctx, 30*time.Second)
	info, infoErr := sys.Info(ictx)
	icancel()
	if infoErr == nil {
		logf("%s: durability %s; %s; batch insert %s", sys.Name(), info.Durability, info.Config, info.BatchMode)
	}
	failed := false
	for i, w := range selected {
		if i > 0 {
			time.Sleep(c.settle)
		}
		l := &line{}
		l.add("system", sys.Name()).add("workload", w.name)
		err := infoErr
		if err == nil {
			logf("running %s on %s", w.name, sys.Name())
			wctx, cancel := context.WithTimeout(ctx, c.timeout)
			start := time.Now()
			err = w.run(wctx, &env{sys: sys, info: info, p: &c.p, logf: logf, memstats: c.memstats, cpustats: c.cpustats}, l)
			cancel()
			l.add("run_s", time.Since(start))
			l.add("durability", info.Durability).add("config", info.Config)
		}
		switch {
		case err == nil:
			l.add("status", "ok")
		case errors.Is(err, errUnsupported):
			l.add("status", "unsupported")
		default:
			failed = true
			l.add("status", "error").add("error", strings.ReplaceAll(err.Error(), "=", ":"))
		}
		fmt.Fprintln(stdout, l.String())
	}
	if failed {
		return 1
	}
	return 0
}

func names(ws []workload) []string {
	n := make([]string, len(ws))
	for i, w := range ws {
		n[i] = w.name
	}
	return n
}

// syncWriter serialises writes from the workloads, server and workers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// prefixWriter prefixes every line with "# ", so that log lines on stderr
// read as notes. slog writes one whole line per call.
type prefixWriter struct{ w io.Writer }

func (p *prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte("# "), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// startTrace starts a Go execution trace written to path; stop ends it
// and closes the file.
func startTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		trace.Stop()
		_ = f.Close()
	}, nil
}
