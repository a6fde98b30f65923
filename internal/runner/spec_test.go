//go:build linux

package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestArgvIsLiteralWithoutShell(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{Argv: []string{"printf", `%s\n`, "a b", "$HOME", "*", "; echo no"}})
	wantClass(t, res, ClassNone, nil)
	if got, want := rec.String(Stdout), "a b\n$HOME\n*\n; echo no\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestShellMode(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{
		Shell: true,
		Argv:  []string{"echo", `"$FOO"`, "$((1+2));", "echo", "second"},
		Env:   map[string]string{"FOO": "b a r"},
	})
	wantClass(t, res, ClassNone, nil)
	if got, want := rec.String(Stdout), "b a r 3\nsecond\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestEnvIsMinimalPlusSpec(t *testing.T) {
	t.Setenv("FAIRWAY_RUNNER_SECRET", "leak")
	t.Setenv("LANG", "C.UTF-8")
	res, rec := run(t, t.Context(), Spec{
		Argv: []string{"env"},
		Env:  map[string]string{"FOO": "x y", "LANG": "fr_FR.UTF-8"},
	})
	wantClass(t, res, ClassNone, nil)
	env := parseEnv(rec.String(Stdout))
	if env["FOO"] != "x y" || env["LANG"] != "fr_FR.UTF-8" {
		t.Errorf("FOO=%q LANG=%q, want spec values", env["FOO"], env["LANG"])
	}
	if _, ok := env["FAIRWAY_RUNNER_SECRET"]; ok {
		t.Error("worker variable leaked into the minimal environment")
	}
	if env["PATH"] == "" {
		t.Error("PATH missing")
	}
	for k := range env {
		if !slices.Contains(append(baseEnvKeys, "FOO", MarkerEnv), k) {
			t.Errorf("unexpected variable %s", k)
		}
	}
}

func TestInheritEnv(t *testing.T) {
	t.Setenv("FAIRWAY_RUNNER_SECRET", "inherited")
	res, rec := run(t, t.Context(), Spec{
		Argv:       []string{"env"},
		InheritEnv: true,
		Env:        map[string]string{"FOO": "over"},
	})
	wantClass(t, res, ClassNone, nil)
	env := parseEnv(rec.String(Stdout))
	if env["FAIRWAY_RUNNER_SECRET"] != "inherited" || env["FOO"] != "over" {
		t.Errorf("SECRET=%q FOO=%q", env["FAIRWAY_RUNNER_SECRET"], env["FOO"])
	}
}

func TestArgv0ResolvedInChildPath(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "fairway-hello"), []byte("#!/bin/sh\necho hello from $0\n"))
	if err := os.Chmod(filepath.Join(bin, "fairway-hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, rec := run(t, t.Context(), Spec{
		Argv: []string{"fairway-hello"},
		Env:  map[string]string{"PATH": bin + ":/usr/bin:/bin"},
	})
	wantClass(t, res, ClassNone, nil)
	if got, want := rec.String(Stdout), "hello from "+filepath.Join(bin, "fairway-hello")+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, rec := run(t, t.Context(), Spec{Argv: []string{"pwd"}, Dir: dir})
	wantClass(t, res, ClassNone, nil)
	if got := strings.TrimSpace(rec.String(Stdout)); !sameDir(t, got, dir) {
		t.Errorf("pwd = %q, want %q", got, dir)
	}
}

func TestDefaultDirIsFreshAndRemoved(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{Argv: sh(`pwd; touch file; mkdir sub; ls -A`)})
	wantClass(t, res, ClassNone, nil)
	lines := strings.Split(strings.TrimSpace(rec.String(Stdout)), "\n")
	if len(lines) != 3 || lines[1] != "file" || lines[2] != "sub" {
		t.Fatalf("output %q: want pwd then a directory holding only file and sub", lines)
	}
	if !strings.HasPrefix(filepath.Base(lines[0]), "fairway-job-") {
		t.Errorf("working directory %q is not a fresh fairway-job-* directory", lines[0])
	}
	if _, err := os.Stat(lines[0]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("working directory %q still exists after Run: %v", lines[0], err)
	}
}

func TestStdin(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{Argv: []string{"cat"}, Stdin: []byte("line 1\nline 2")})
	wantClass(t, res, ClassNone, nil)
	if got, want := rec.String(Stdout), "line 1\nline 2"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	res, rec = run(t, t.Context(), Spec{Argv: []string{"cat"}}) // nil Stdin: /dev/null, cat ends at once
	wantClass(t, res, ClassNone, nil)
	if got := rec.String(Stdout); got != "" {
		t.Errorf("stdout = %q, want empty", got)
	}
}

func TestExitCodePropagated(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{Argv: sh(`echo bye >&2; exit 3`)})
	wantClass(t, res, ClassExitCode, ErrExit)
	if res.ExitCode != 3 || res.Signal != "" {
		t.Errorf("ExitCode=%d Signal=%q, want 3 and none", res.ExitCode, res.Signal)
	}
	if rec.String(Stderr) != "bye\n" {
		t.Errorf("stderr = %q", rec.String(Stderr))
	}
	if res.Started.IsZero() || res.Finished.Before(res.Started) {
		t.Errorf("Started=%v Finished=%v", res.Started, res.Finished)
	}
}

func TestOnStartGetsThePid(t *testing.T) {
	t.Parallel()
	var pid int
	res, rec := run(t, t.Context(), Spec{Argv: sh(`echo $$`), OnStart: func(p int) { pid = p }})
	wantClass(t, res, ClassNone, nil)
	if got := strings.TrimSpace(rec.String(Stdout)); got != strconv.Itoa(pid) || pid != res.Pid || pid == 0 {
		t.Errorf("child says pid %s, OnStart got %d, Result.Pid %d", got, pid, res.Pid)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	writeFile(t, notExec, []byte("#!/bin/sh\n"))
	tests := map[string]struct {
		spec  Spec
		cause error
	}{
		"missing binary":      {Spec{Argv: []string{"fairway-no-such-binary"}}, exec.ErrNotFound},
		"missing path":        {Spec{Argv: []string{filepath.Join(dir, "nope")}}, fs.ErrNotExist},
		"not executable":      {Spec{Argv: []string{notExec}}, fs.ErrPermission},
		"missing dir":         {Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "nope")}, fs.ErrNotExist},
		"empty argv":          {Spec{}, nil},
		"bad env name":        {Spec{Argv: []string{"true"}, Env: map[string]string{"A=B": "c"}}, nil},
		"NUL in an argument":  {Spec{Argv: []string{"echo", "a\x00b"}}, nil},
		"empty argv[0]":       {Spec{Argv: []string{""}}, nil},
		"shell with bad dir":  {Spec{Argv: []string{"true"}, Shell: true, Dir: filepath.Join(dir, "nope")}, fs.ErrNotExist},
		"not executable path": {Spec{Argv: []string{"./not-executable"}, Dir: dir}, fs.ErrPermission},
	}
	for name, tc := range tests {
		started := false
		tc.spec.OnStart = func(int) { started = true }
		res, rec := run(t, t.Context(), tc.spec)
		if res.Class != ClassStartError || !errors.Is(res.Err, ErrStart) {
			t.Errorf("%s: Class=%q Err=%v, want start_error wrapping ErrStart", name, res.Class, res.Err)
			continue
		}
		if tc.cause != nil && !errors.Is(res.Err, tc.cause) {
			t.Errorf("%s: Err = %v, want it to wrap %v", name, res.Err, tc.cause)
		}
		if res.Pid != 0 || res.ExitCode != -1 || started || rec.String(Stdout)+rec.String(Stderr) != "" {
			t.Errorf("%s: Pid=%d ExitCode=%d started=%v", name, res.Pid, res.ExitCode, started)
		}
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	started := false
	res, _ := run(t, ctx, Spec{Argv: []string{"true"}, OnStart: func(int) { started = true }})
	wantClass(t, res, ClassKilled, context.Canceled)
	if started || res.Pid != 0 {
		t.Errorf("started=%v Pid=%d, want nothing started", started, res.Pid)
	}
}

func parseEnv(out string) map[string]string {
	env := map[string]string{}
	for line := range strings.Lines(out) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			env[k] = v
		}
	}
	return env
}

func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
