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
//     group, for background processes it left behind. A job's processes do
//     not outlive it, as with a container whose init exits.
//
// The group id must not be signalled after it might have been reused. Run
// therefore learns of the child's exit with waitid(WEXITED|WNOWAIT), which
// does not reap: the unreaped (zombie) child keeps its pid, hence the group
// id, reserved. Every signal is sent before cmd.Wait reaps the child.
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
// Processes that leave the group escape the kill (only a per-job cgroup
// would hold them); their output is cut off after DrainTimeout. The package
// builds on other systems but Run fails there with ClassStartError wrapping
// errors.ErrUnsupported.
package runner
