package runner

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"time"
)

// Run runs spec's command to completion and reports how it ended. It streams
// the child's output to out (which may be nil) and returns only once the
// child has exited, the rest of its process group has been killed, the output
// has been drained and the child reaped: nothing started by Run outlives it.
//
// Cancelling ctx (the job was cancelled, or the worker is shutting down)
// terminates the process group: SIGTERM, then SIGKILL after Spec.KillGrace;
// the result is then ClassKilled with Err wrapping context.Cause(ctx). A ctx
// already done before the start yields ClassKilled without starting anything.
func Run(ctx context.Context, spec Spec, out Output) Result {
	now := time.Now()
	if err := platformError(); err != nil {
		return startFailure(now, err)
	}
	p, err := prepare(spec)
	if err != nil {
		return startFailure(now, err)
	}
	defer p.cleanup()
	if ctx.Err() != nil {
		o := outcome{stopped: ClassKilled, cause: context.Cause(ctx), exitedAt: now, exit: exitInfo{code: -1}}
		return o.result(0, now)
	}
	return execute(ctx, spec, p, &sink{out: out})
}

// execute starts the child and supervises it to the end.
//
// The goroutine stays locked to its OS thread from the start until the child
// is reaped: Pdeathsig fires when the thread that forked the child exits, not
// when the process does, and the runtime never retires a thread while a
// goroutine holds it locked.
func execute(ctx context.Context, spec Spec, p *plan, s *sink) Result {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	pipes, err := openOutputPipes(s)
	if err != nil {
		return startFailure(time.Now(), err)
	}
	cmd := command(spec, p, pipes)
	cg := jobCgroupFor(spec)
	if cg != nil {
		cg.attach(cmd.SysProcAttr)
	}
	oomBefore, oomKnown := oomKills()
	started := time.Now()
	beginSpawn()
	err = cmd.Start()
	if err == nil {
		addRoot(cmd.Process.Pid)
	}
	endSpawn()
	pipes.closeWriteEnds()
	if cg != nil {
		cg.started()
	}
	if err != nil {
		pipes.closeReadEnds()
		if cg != nil {
			cg.remove()
		}
		return startFailure(started, fmt.Errorf("%s: %w", p.path, err))
	}
	c := newChild(spec, cmd, pipes, started)
	c.marker = p.marker
	c.cgroup = cg
	defer removeRoot(c.pid())
	if spec.OnStart != nil {
		spec.OnStart(c.pid())
	}
	o := c.supervise(ctx)
	if oomKnown && o.exit.mayBeOOM() { // the counter matters only then: spare the read otherwise
		oomAfter, _ := oomKills()
		o.oomRose = oomAfter > oomBefore
	}
	return o.result(c.pid(), started)
}

func command(spec Spec, p *plan, pipes *outputPipes) *exec.Cmd {
	cmd := &exec.Cmd{
		Path:        p.path,
		Args:        p.args,
		Env:         p.env,
		Dir:         p.dir,
		Stdout:      pipes.stdoutW,
		Stderr:      pipes.stderrW,
		SysProcAttr: sysProcAttr(),
		// Bounds Wait's stdin copier should an escaped descendant hold
		// stdin open without reading it.
		WaitDelay: spec.drainTimeout(),
	}
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	return cmd
}

// child is a started process under supervision.
type child struct {
	spec     Spec
	cmd      *exec.Cmd
	group    group
	pipes    *outputPipes
	started  time.Time
	exited   chan struct{} // closed when the process has exited (not reaped)
	exitedAt time.Time     // written before exited is closed
	marker   string        // MarkerEnv's value: every process of this run carries it
	cgroup   *jobCgroup    // the run's own cgroup; nil when it has none
	orphans  orphanUsage   // what the escaped processes killOrphans reaped used
}

// newChild starts watching the process and reading its output.
func newChild(spec Spec, cmd *exec.Cmd, pipes *outputPipes, started time.Time) *child {
	c := &child{
		spec:    spec,
		cmd:     cmd,
		group:   group{pgid: cmd.Process.Pid},
		pipes:   pipes,
		started: started,
		exited:  make(chan struct{}),
	}
	go func() {
		_ = waitExited(c.pid()) // on failure cmd.Wait reports the problem
		c.exitedAt = time.Now()
		close(c.exited)
	}()
	pipes.start()
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// supervise waits for the child to exit, stopping its group on ctx
// cancellation or timeout, then kills what is left of the group, drains the
// output and reaps the child. Every signal is sent before the reap, while
// the group id cannot have been reused.
func (c *child) supervise(ctx context.Context) outcome {
	var o outcome
	o.stopped, o.cause = c.watch(ctx)
	o.exitedAt = c.exitedAt // watch returns only after exited is closed
	c.group.kill()          // leftovers: background jobs the child did not wait for
	c.killEscaped()         // and those that left the group (setsid, double fork)
	o.cut = c.pipes.drain(c.spec.drainTimeout())
	o.exit = c.reap()
	o.usage = c.usage()
	if c.cgroup != nil {
		c.cgroup.remove()
	}
	return o
}

// killEscaped kills the run's processes that left its process group: all
// that remain in its cgroup, or, without one, the orphans that carry its
// marker (killOrphans).
func (c *child) killEscaped() {
	if c.cgroup != nil {
		c.cgroup.kill(c.spec.killGrace())
		reapOrphans() // escaped processes re-parented here and now dead
		return
	}
	c.orphans.add(killOrphans(c.marker))
}

// usage is what the run's processes used; call it after reap.
func (c *child) usage() Usage {
	u := processUsage(c.cmd.ProcessState, c.orphans)
	if c.cgroup == nil {
		return u
	}
	cu, ok := c.cgroup.usage()
	if !ok {
		return u
	}
	if cu.PeakRSSBytes == 0 {
		cu.PeakRSSBytes = u.PeakRSSBytes
	}
	return cu
}

// watch returns once the child has exited, with the reason Run stopped it,
// if it did.
func (c *child) watch(ctx context.Context) (FailureClass, error) {
	var expired <-chan time.Time
	if c.spec.Timeout > 0 {
		t := time.NewTimer(time.Until(c.started.Add(c.spec.Timeout)))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-c.exited:
		return ClassNone, nil
	case <-ctx.Done():
		c.stop()
		return ClassKilled, context.Cause(ctx)
	case <-expired:
		c.stop()
		return ClassTimeout, nil
	}
}

// stop sends SIGTERM to the group and SIGKILL once KillGrace has passed,
// unless by then the child has exited and the output pipes are closed
// (everything holding them is gone). It returns after the child has exited.
func (c *child) stop() {
	c.group.terminate()
	t := time.NewTimer(c.spec.killGrace())
	defer t.Stop()
	if waitFor(c.exited, t.C) {
		c.killEscaped() // descendants outside the group would hold the pipes to the grace's end
		if waitFor(c.pipes.allDone, t.C) {
			return
		}
	}
	c.group.kill()
	<-c.exited
}

// waitFor reports whether done closed before deadline fired.
func waitFor(done <-chan struct{}, deadline <-chan time.Time) bool {
	select {
	case <-done:
		return true
	case <-deadline:
		return false
	}
}

// reap collects the child's exit status.
func (c *child) reap() exitInfo {
	err := c.cmd.Wait() // *exec.ExitError and exec.ErrWaitDelay are expected; ProcessState says it all
	if c.cmd.ProcessState == nil {
		return exitInfo{code: -1, waitErr: fmt.Errorf("wait: %w", err)}
	}
	return decodeExit(c.cmd.ProcessState)
}
