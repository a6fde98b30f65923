package runner

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Defaults applied by Run when the corresponding Spec field is zero.
const (
	DefaultKillGrace    = 5 * time.Second
	DefaultDrainTimeout = 2 * time.Second
	// DefaultPath is the child's PATH when the worker itself has none.
	DefaultPath = "/usr/local/bin:/usr/bin:/bin"
	shellPath   = "/bin/sh"
)

// baseEnvKeys are copied from the worker's environment into the child's
// minimal environment when Spec.InheritEnv is false.
var baseEnvKeys = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Spec describes one command to run.
type Spec struct {
	// Argv is the command and its arguments; it must not be empty. Without
	// Shell, Argv[0] is looked up in the child's PATH (see Env) unless it
	// contains a slash; a relative path with a slash is relative to Dir.
	// Arguments are passed verbatim: no globbing, no $ expansion.
	Argv []string
	// Env is added to the child's environment, overriding the base. The
	// base is PATH, HOME, LANG and TMPDIR copied from the worker (PATH
	// defaults to DefaultPath), or the worker's whole environment when
	// InheritEnv is set.
	Env        map[string]string
	InheritEnv bool
	// Dir is the working directory. "" means a fresh private directory
	// (mode 0700, under the worker's os.TempDir) created for this run and
	// removed, best effort, when Run returns. A worker killed mid-run leaves
	// it behind: sweep stale fairway-job-* directories when the worker starts.
	Dir string
	// Shell runs strings.Join(Argv, " ") with /bin/sh -c. Whether a job
	// may use it is the caller's decision.
	Shell bool
	// Timeout bounds the run, measured from a successful start; 0 means
	// none. At expiry the process group is terminated (see KillGrace) and
	// the result is ClassTimeout.
	Timeout time.Duration
	// KillGrace is how long the process group has between SIGTERM and
	// SIGKILL; <= 0 means DefaultKillGrace.
	KillGrace time.Duration
	// DrainTimeout bounds how long Run keeps reading stdout/stderr (and
	// writing Stdin) once the process group is gone, in case a descendant
	// that escaped the group still holds a pipe; <= 0 means
	// DefaultDrainTimeout. When it expires Result.OutputIncomplete is set.
	DrainTimeout time.Duration
	// Stdin is fed to the child's standard input; nil means /dev/null.
	Stdin []byte
	// CgroupParent, if set, is a cgroup v2 directory (JobCgroupParent)
	// under which Run creates a cgroup for this run and starts the child in
	// it: every process the job starts is then killed at its end, and its
	// usage comes from the cgroup. If the cgroup cannot be created, the run
	// goes on without one (the process group and the subreaper's orphans).
	CgroupParent string
	// OnStart, if set, is called with the child's pid once it has started,
	// before any output is delivered.
	OnStart func(pid int)
}

func (s Spec) killGrace() time.Duration {
	if s.KillGrace <= 0 {
		return DefaultKillGrace
	}
	return s.KillGrace
}

func (s Spec) drainTimeout() time.Duration {
	if s.DrainTimeout <= 0 {
		return DefaultDrainTimeout
	}
	return s.DrainTimeout
}

// plan is a validated Spec resolved into what exec needs.
type plan struct {
	path    string
	args    []string
	env     []string
	dir     string
	tempDir string // removed by cleanup when non-empty
	marker  string // MarkerEnv's value for this run
}

// prepare validates spec and resolves the program, environment and working
// directory. The returned plan must be cleaned up.
func prepare(spec Spec) (*plan, error) {
	if err := validate(spec); err != nil {
		return nil, err
	}
	env := buildEnv(spec)
	path, args, err := resolveArgv(spec, lookupEnv(env, "PATH"))
	if err != nil {
		return nil, err
	}
	marker := newMarker()
	p := &plan{path: path, args: args, env: append(env, MarkerEnv+"="+marker), dir: spec.Dir, marker: marker}
	if p.dir == "" {
		dir, err := os.MkdirTemp("", "fairway-job-*")
		if err != nil {
			return nil, fmt.Errorf("create working directory: %w", err)
		}
		p.dir, p.tempDir = dir, dir
	}
	return p, nil
}

func (p *plan) cleanup() {
	if p.tempDir != "" {
		_ = os.RemoveAll(p.tempDir) // best effort; the job may leave unremovable files
	}
}

func validate(spec Spec) error {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return fmt.Errorf("empty argv")
	}
	for _, a := range spec.Argv {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %q contains a NUL byte", a)
		}
	}
	for k, v := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf("invalid environment variable %q", k)
		}
	}
	return nil
}

// buildEnv returns the child's environment as sorted KEY=value pairs.
func buildEnv(spec Spec) []string {
	vars := baseEnv(spec.InheritEnv)
	maps.Copy(vars, spec.Env)
	env := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env
}

func baseEnv(inherit bool) map[string]string {
	vars := make(map[string]string)
	if inherit {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				vars[k] = v
			}
		}
		return vars
	}
	for _, k := range baseEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	if _, ok := vars["PATH"]; !ok {
		vars["PATH"] = DefaultPath
	}
	return vars
}

func lookupEnv(env []string, key string) string {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}

// resolveArgv returns the program path and argv for exec.
func resolveArgv(spec Spec, pathEnv string) (string, []string, error) {
	if spec.Shell {
		return shellPath, []string{"sh", "-c", strings.Join(spec.Argv, " ")}, nil
	}
	path, err := lookPath(spec.Argv[0], pathEnv)
	if err != nil {
		return "", nil, err
	}
	return path, slices.Clone(spec.Argv), nil
}

// lookPath finds name in the child's PATH. Unlike exec.LookPath it uses
// the child's PATH, not the worker's, and ignores relative PATH entries
// (they would be resolved against the worker's cwd, not the job's Dir).
func lookPath(name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		candidate := filepath.Join(dir, name)
		if isExecutable(candidate) {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH %q: %w", name, pathEnv, errNotFound)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
