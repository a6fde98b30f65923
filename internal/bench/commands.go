package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// The commands workload is fairway's own (peerbench's systems run no
// processes): --jobs jobs whose command is --command run by one real
// `fairway worker` process (--worker-bin, default this binary) with
// --command-slots slots, against the in-process server. It reports jobs/s
// and the CPU each job cost, split by process:
//
//   - server_cpu_us_per_job: this bench process (the server, and the
//     producer's client, which submits in batches and polls GET /lanes
//     every 50ms), from getrusage(RUSAGE_SELF);
//   - worker_cpu_us_per_job: the worker process itself, from its
//     /proc/PID/stat utime+stime;
//   - job_cpu_us_per_job: the commands it ran and reaped (cutime+cstime).
//
// The window opens once the worker has registered (its start-up is not
// counted) and closes when no job is pending or running; the jobs are
// submitted inside it, so the server's figure covers submit, lease and
// completion.

// CommandsParams size the commands workload.
type CommandsParams struct {
	Command    string // split on spaces into the job's argv
	WorkerBin  string // the fairway binary that runs `worker`; "" is this one
	WorkerArgs string // more flags for `fairway worker`, split on spaces
	Slots      int
}

func runCommands(ctx context.Context, e *env, l *line) error {
	f, ok := e.sys.(*fairwaySystem)
	if !ok {
		return errUnsupported
	}
	cp := e.p.Commands
	argv := strings.Fields(cp.Command)
	if len(argv) == 0 || e.p.Jobs < 1 || cp.Slots < 1 {
		return errors.New("--command must not be empty, --jobs and --command-slots must be >= 1")
	}
	if err := f.Reset(ctx); err != nil {
		return err
	}
	r, err := f.current()
	if err != nil {
		return err
	}
	wp, err := startWorkerProcess(cp, r.url, e.logf)
	if err != nil {
		return err
	}
	defer wp.stop(e.p.StopTimeout, e.logf)
	if err := waitWorkerRegistered(ctx, f); err != nil {
		return err
	}

	before, err := takeCPUSample(wp.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	jobs := make([]Job, e.p.Jobs)
	for i := range jobs {
		jobs[i] = Job{Seq: int64(i + 1), EnqueuedAt: time.Now().UnixNano()}
	}
	if err := submitCommands(ctx, f, jobs, argv); err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	if err := waitCommandsDone(ctx, f, e.p.DrainTimeout); err != nil {
		return err
	}
	wall := time.Since(start)
	after, err := takeCPUSample(wp.pid())
	if err != nil {
		return err
	}
	n := float64(e.p.Jobs)
	perJob := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/n, 'f', 0, 64) }
	l.add("jobs", e.p.Jobs).add("command", strings.Join(argv, "_")).add("slots", cp.Slots)
	l.add("jobs_per_s", strconv.FormatFloat(n/wall.Seconds(), 'f', 1, 64))
	l.add("server_cpu_us_per_job", perJob(after.self-before.self))
	l.add("worker_cpu_us_per_job", perJob(after.worker-before.worker))
	l.add("job_cpu_us_per_job", perJob(after.jobs-before.jobs))
	l.add("wall_s", wall)
	return nil
}

// submitCommands submits jobs as command jobs, in the batches InsertBatch
// uses.
func submitCommands(ctx context.Context, f *fairwaySystem, jobs []Job, argv []string) error {
	r, err := f.current()
	if err != nil {
		return err
	}
	for len(jobs) > 0 {
		n := min(f.opts.Batch, len(jobs))
		specs := make([]api.JobSpec, n)
		for i, j := range jobs[:n] {
			specs[i] = f.spec(j)
			specs[i].Command = argv
		}
		if _, err := r.cl.SubmitBatch(ctx, specs); err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}

// waitCommandsDone polls the server every 50ms until no job is pending or
// running.
func waitCommandsDone(ctx context.Context, f *fairwaySystem, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		n, err := f.Outstanding(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d jobs still outstanding after --drain-timeout %s", n, bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitWorkerRegistered polls GET /workers until a worker is registered.
func waitWorkerRegistered(ctx context.Context, f *fairwaySystem) error {
	r, err := f.current()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := r.cl.Workers(ctx)
		if err == nil && len(list) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the worker process did not register within 30s (last error: %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// workerProcess is a `fairway worker` child process.
type workerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func startWorkerProcess(cp CommandsParams, url string, logf func(string, ...any)) (*workerProcess, error) {
	bin := cp.WorkerBin
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("--worker-bin: this binary's path: %w", err)
		}
		bin = self
	}
	cmd := exec.Command(bin, "worker", "--server", url, "--slots", strconv.Itoa(cp.Slots),
		"--name", "bench-commands", "--log-level", "warn")
	cmd.Args = append(cmd.Args, strings.Fields(cp.WorkerArgs)...)
	cmd.Stdout = logWriter(logf)
	cmd.Stderr = logWriter(logf)
	cmd.Env = append(os.Environ(), "FAIRWAY_API_KEY=")
	cmd.SysProcAttr = workerSysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s worker: %w", bin, err)
	}
	logf("commands: worker process %d: %s", cmd.Process.Pid, strings.Join(cmd.Args, " "))
	wp := &workerProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(wp.exited)
	}()
	return wp, nil
}

// logWriter passes what the worker process writes to logf, line by line
// (os/exec copies its output from one goroutine).
type logWriter func(string, ...any)

func (l logWriter) Write(b []byte) (int, error) {
	for line := range strings.Lines(string(b)) {
		l("worker: %s", strings.TrimRight(line, "\n"))
	}
	return len(b), nil
}

func (wp *workerProcess) pid() int { return wp.cmd.Process.Pid }

// stop sends SIGTERM and waits up to bound, then SIGKILLs.
func (wp *workerProcess) stop(bound time.Duration, logf func(string, ...any)) {
	_ = wp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-wp.exited:
	case <-time.After(bound):
		logf("commands: worker did not stop within %s; killing it", bound)
		_ = wp.cmd.Process.Kill()
		<-wp.exited
	}
}

func registerCommandsFlags(fs *flag.FlagSet, cp *CommandsParams) {
	fs.StringVar(&cp.Command, "command", "true", "commands: the job's command, split on spaces (no shell)")
	fs.StringVar(&cp.WorkerBin, "worker-bin", "", "commands: the fairway `binary` whose 'worker' runs the jobs (default: this one)")
	fs.StringVar(&cp.WorkerArgs, "worker-flags", "", "commands: more `flags` for 'fairway worker', split on spaces (e.g. --job-cgroups=false)")
	fs.IntVar(&cp.Slots, "command-slots", 2, "commands: the worker's --slots")
}
