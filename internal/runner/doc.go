// Package runner runs one job's command as a child process for
// `fairway worker` and reports how it ended.
//
// # Starting
//
// Run resolves Spec.Argv[0] in the child's PATH (not the worker's), builds a
// minimal environment (PATH, HOME, LANG, TMPDIR from the worker, plus
// Spec.Env; or the worker's whole environment with InheritEnv) and starts the
// child in a working directory: Spec.Dir, or a fresh private directory that
// is removed when Run returns. Arguments are passed verbatim; only
// Spec.Shell hands the joined Argv to /bin/sh -c. Anything that prevents the
// start (empty Argv, binary not found or not executable, bad Dir) is
// ClassStartError with an Err wrapping ErrStart and the cause.
//
// # Process group and signals
//
// The child is started with Setpgid, so it leads a new process group whose
// id is its pid, and every descendant that does not deliberately leave the
// group (setsid, setpgid) belongs to it. All signals go to the whole group
// (kill(-pgid)), so `sh -c 'sleep 100 & sleep 100'` cannot leave a sleep
// behind:
//
//   - ctx cancelled (job cancelled, worker shutting down) or Spec.Timeout
//     expired: SIGTERM to the group, then SIGKILL after Spec.KillGrace. The
//     grace ends early once the child has exited and the output pipes are
//     closed, i.e. everything that held them is gone. The class is
//     ClassKilled or ClassTimeout, decided by which came first, whatever the
//     exit status (a child that handles SIGTERM and exits 0 was still
//     stopped).
//   - The child exits (on its own or after the above): SIGKILL to the
//     group, for background processes it left behind, then to the
//     descendants that left the group (below). A job's processes do not
//     outlive it, as with a container whose init exits.
//
// The group id must not be signalled after it might have been reused. Run
// therefore learns of the child's exit with waitid(WEXITED|WNOWAIT), which
// does not reap: the unreaped (zombie) child keeps its pid, hence the group
// id, reserved. Every signal is sent before cmd.Wait reaps the child.
//
// # Descendants that leave the group
//
// A descendant that calls setsid or setpgid (a daemon's double fork,
// nohup-like wrappers) is out of reach of kill(-pgid). Run finds those
// without scanning /proc, in one of two ways:
//
//   - Job cgroup (Spec.CgroupParent set, cgroup v2, the worker allowed to
//     create cgroups there: JobCgroupParent probes it). The child is
//     started inside a fresh cgroup of its own with clone3
//     CLONE_INTO_CGROUP; whatever its descendants do, they stay in it. At
//     the end cgroup.kill (Linux 5.14+; before, SIGKILL to each pid of
//     cgroup.procs, repeated) empties it, Run waits until cgroup.events
//     says unpopulated (bounded by KillGrace), reads its usage and removes
//     it. This catches everything, including a process that cleared its
//     environment. A cgroup left by a worker that was killed is emptied and
//     removed by SweepCgroups at the next worker's start.
//   - Otherwise, the subreaper and the marker. Every job process carries
//     MarkerEnv, unique to the Run, in its environment. The worker is the
//     child subreaper (SetSubreaper), so once the job's child has exited,
//     every surviving descendant is the worker's child or a descendant of
//     one. killOrphans lists the worker's children
//     (/proc/self/task/*/children), skips other Runs' roots, reads the
//     environment of the few others, and SIGKILLs and reaps those carrying
//     this Run's marker; their children are thereby re-parented to the
//     worker and found in the next round, until a round finds none. The
//     cost is a few small reads per job, not two reads of every process on
//     the machine. It misses what the scan of every process also missed: a
//     descendant that cleared its environment (env -i) and left the group;
//     its output is cut off after DrainTimeout (it is reaped, once it
//     exits, by reapOrphans). Where the worker is not a subreaper (prctl
//     failed) it falls back to that scan of /proc/*/environ.
//
// # Usage
//
// Result.Usage is what the run's processes used. With a job cgroup: its
// cpu.stat (user_usec, system_usec: every process that ran in it) and
// memory.peak when the memory controller is enabled for it (else the
// largest ru_maxrss, below). Otherwise: wait4's rusage of the child (which
// includes the descendants it waited for) plus that of the escaped
// processes killOrphans reaped; ru_maxrss is the largest single process's
// peak, not a sum. Wall time is Result.Duration.
//
// # Worker death: Pdeathsig
//
// The child is started with Pdeathsig=SIGKILL, so the kernel kills it if the
// worker dies, even by SIGKILL. Pdeathsig is tied to the thread that forked
// the child, not to the process: if that thread exited, the child would be
// killed while the worker lives. Go retires threads only when a goroutine
// exits while locked to one, so Run locks its goroutine to its OS thread from
// before the fork until after the reap. Pdeathsig reaches only the child:
// its descendants survive a worker crash. Run the worker in its own cgroup
// (systemd KillMode=control-group, a container) to have them cleaned up.
//
// # Output
//
// Stdout and stderr are two pipes read by two goroutines of Run and handed
// to Output one chunk at a time, serialised, each stream in order (see
// Output for chunking). Stdin is Spec.Stdin, or /dev/null. After the child
// has exited and the group has been killed, the pipes normally reach EOF at
// once; a descendant that escaped the group (setsid, a daemon) may hold them
// open forever, so Run waits at most Spec.DrainTimeout, then closes its read
// ends, sets Result.OutputIncomplete and returns. The same bound, as
// exec.Cmd.WaitDelay, applies to the goroutine writing Stdin. Run returns
// only after its goroutines are done and never calls Output after returning.
//
// # Classification
//
// Exit 0 is success (Class ""). A non-zero exit is ClassExitCode. Death by
// SIGKILL that Run did not send is ClassOOM when the worker's memory cgroup
// oom_kill counter (cgroup v2 memory.events or v1 memory.oom_control) rose
// during the run, else ClassKilled; exit status 137 (a shell reporting a
// SIGKILLed child) with such a rise is also ClassOOM. Other fatal signals
// are ClassSignal. The cgroup is shared with the worker and its other jobs,
// so the OOM evidence is circumstantial when several jobs run at once.
//
// # Limits
//
// Without a job cgroup, a descendant that leaves the group and clears its
// environment escapes the kill; its output is cut off after DrainTimeout.
// Pdeathsig reaches only the child (see above). The package builds on
// other systems but Run fails there with ClassStartError wrapping
// errors.ErrUnsupported.
package runner
