package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runMake runs make -s TARGET in the repository with env added to (or, for
// PATH, replacing) the test's environment, and returns its output and
// whether it succeeded.
func runMake(t *testing.T, env []string, args ...string) (string, bool) {
	t.Helper()
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH")
	}
	cmd := exec.Command(makePath, append([]string{"-s", "-C", "../.."}, args...)...)
	base := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FAIRWAY_") {
			base = append(base, kv)
		}
	}
	cmd.Env = append(base, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// Issue 28 item 29: make test says in one line which tests it skipped
// (PostgreSQL, browser) and how to run them, and still fails when a test
// fails; where nothing is skipped (CI) it says nothing.
func TestMakeTestSaysWhatItSkipped(t *testing.T) {
	const pgLine = "make test: skipped the PostgreSQL tests (run them with FAIRWAY_TEST_POSTGRES_URL="
	out, ok := runMake(t, []string{"FAIRWAY_REQUIRE_BROWSER=1"}, "test-short", "PKGS=./api/")
	if !ok || strings.Count(out, "make test: skipped") != 1 || !strings.Contains(out, pgLine) || strings.Contains(out, "browser") {
		t.Errorf("without PostgreSQL:\n%s", out)
	}
	out, ok = runMake(t, []string{"FAIRWAY_REQUIRE_BROWSER=1", "FAIRWAY_TEST_POSTGRES_URL=postgres://x"}, "test-short", "PKGS=./api/")
	if !ok || strings.Contains(out, "skipped") {
		t.Errorf("with everything there, nothing is said to be skipped:\n%s", out)
	}
	out, ok = runMake(t, nil, "test-short", "PKGS=./no/such/package/")
	if ok || !strings.Contains(out, pgLine) {
		t.Errorf("a failing run still fails and still says what it skipped (ok %v):\n%s", ok, out)
	}
	out, _ = runMake(t, []string{"PATH=" + t.TempDir(), "FAIRWAY_TEST_POSTGRES_URL=postgres://x"}, "skipped")
	if want := "make test: skipped the web UI's browser tests (install Chromium to run them: apt-get install chromium); CI (.ci/run) runs every test\n"; out != want {
		t.Errorf("without Chromium: %q, want %q", out, want)
	}
}
