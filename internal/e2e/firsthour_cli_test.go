package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// hintCommand returns the arguments of the "fairway ..." command line that
// follows marker in out (without "fairway").
func hintCommand(t *testing.T, out, marker string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(out, marker)
	if !ok {
		t.Fatalf("no %q in\n%s", marker, out)
	}
	line, _, _ := strings.Cut(rest, "\n")
	line, _, _ = strings.Cut(line, " (or --all)")
	words := strings.Fields(line)
	if len(words) < 2 || words[0] != "fairway" {
		t.Fatalf("hint %q is not a fairway command", line)
	}
	return words[1:]
}

// Issue 9 item 1: the next-page hint of a filtered list reads the next
// page of the same list.
func TestListNextPageHintKeepsTheFilters(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	for range 3 {
		if code, out := runCLI(t, url, "submit", "--wait", "demo", "--", "true"); code != 0 {
			t.Fatalf("submit: exit %d\n%s", code, out)
		}
	}
	for range 3 {
		if code, out := runCLI(t, url, "submit", "long", "--", "sleep", "30"); code != 0 {
			t.Fatalf("submit: exit %d\n%s", code, out)
		}
	}
	code, out := runCLI(t, url, "list", "--limit", "2", "--state", "succeeded")
	if code != 0 || strings.Count(out, "  succeeded  ") != 2 {
		t.Fatalf("first page: exit %d\n%q", code, out)
	}
	next := hintCommand(t, out, "more jobs: ")
	code, out = runCLI(t, url, next...)
	if code != 0 || strings.Count(out, "  succeeded  ") != 1 || strings.Count(out, "\n") != 2 {
		t.Errorf("fairway %s: exit %d\n%s", strings.Join(next, " "), code, out)
	}
	code, out = runCLI(t, url, "list", "--cursor", next[len(next)-1])
	if code == 0 || !strings.Contains(out, "cursor_mismatch") {
		t.Errorf("the cursor without its filters: exit %d\n%s", code, out)
	}
}

// statusOf runs `fairway status ID` and returns its output.
func statusOf(t *testing.T, url, id string) string {
	t.Helper()
	code, out := runCLI(t, url, "status", id)
	if code != 0 {
		t.Fatalf("status %s: exit %d\n%s", id, code, out)
	}
	return out
}

// submitID submits and returns the job id fairway printed.
func submitID(t *testing.T, url string, args ...string) string {
	t.Helper()
	code, out := runCLI(t, url, append([]string{"submit"}, args...)...)
	if code != 0 {
		t.Fatalf("submit %v: exit %d\n%s", args, code, out)
	}
	return strings.Fields(out)[0]
}

// Issue 9 items 2, 4 and 8: status shows a start time for a job that ran
// between two worker reports, says a failure once, labels a retry's time
// as such, and shows no error or run at the user did not set.
func TestStatusSaysWhatTheUserSetAndWhatHappenedOnce(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	code, out := runCLI(t, url, "submit", "--wait", "--max-attempts", "1", "demo", "--", "sh", "-c", "exit 3")
	if code == 0 || !strings.Contains(out, "failed (attempt 1: exit code 3)\n") || strings.Contains(out, "runner") {
		t.Errorf("a failing job's --wait: exit %d\n%s", code, out)
	}
	failed := strings.Fields(out)[2]
	st := statusOf(t, url, failed)
	for _, want := range []string{"\nstarted: ", "failed (attempt 1: exit code 3)\n"} {
		if !strings.Contains(st, want) {
			t.Errorf("status of a fast failed job lacks %q:\n%s", want, st)
		}
	}
	if strings.Contains(st, "runner:") || strings.Contains(st, "run at:") || strings.Count(st, "exit code 3") != 2 {
		t.Errorf("status of a fast failed job repeats itself or shows a run at:\n%s", st)
	}

	retried := submitID(t, url, "--max-attempts", "2", "--retry", "fixed", "--retry-delay", "1h", "demo", "--", "sh", "-c", "echo boom >&2; exit 5")
	eventually(t, 30*time.Second, "the job to wait for its retry", func() bool {
		return strings.Contains(statusOf(t, url, retried), "retry_wait")
	})
	st = statusOf(t, url, retried)
	if !strings.Contains(st, "\nretry at: ") || strings.Contains(st, "run at:") || strings.Contains(st, "\nerror:") ||
		strings.Contains(st, "lease expires:") || !strings.Contains(st, "\nstarted: ") {
		t.Errorf("status of a job waiting for its retry:\n%s", st)
	}

	later := submitID(t, url, "--run-at", "+10m", "demo", "--", "true")
	if st := statusOf(t, url, later); !strings.Contains(st, "\nrun at: ") {
		t.Errorf("status of a job with --run-at does not show it:\n%s", st)
	}
}

// Issue 9 item 5: logs of a retried job show a header per attempt, and
// an attempt the job never had is an error (exit 3), not empty output.
func TestLogsShowEachAttemptUnderItsHeader(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	code, out := runCLI(t, url, "submit", "--wait", "--max-attempts", "2", "--retry", "immediate", "demo", "--",
		"sh", "-c", "echo trying; echo oops >&2; exit 3")
	if code != 1 {
		t.Fatalf("submit --wait: exit %d\n%s", code, out)
	}
	id := strings.Fields(out)[2]
	code, out = runCLI(t, url, "logs", id)
	want := "==> attempt 1 of 2 on w-"
	first, second := strings.Index(out, want), strings.Index(out, "==> attempt 2 of 2 on w-")
	if code != 0 || first < 0 || second < first || !strings.Contains(out[first:second], "trying") ||
		!strings.Contains(out[second:], "trying") || !strings.Contains(out, ": failed, exit code 3 <==") {
		t.Errorf("logs of a job with two attempts: exit %d\n%s", code, out)
	}
	code, out = runCLI(t, url, "logs", "--attempt", "9", id)
	if code != 3 || !strings.Contains(out, "has had 2 attempt(s): there is no attempt 9") {
		t.Errorf("logs --attempt 9: exit %d\n%s", code, out)
	}
	code, out = runCLI(t, url, "logs", "--attempt", "2", id)
	if code != 0 || strings.Contains(out, "==>") || !strings.Contains(out, "trying") {
		t.Errorf("logs --attempt 2: exit %d\n%s", code, out)
	}
}

// singleDashFlag matches a flag listed with Go's one dash ("  -limit").
var singleDashFlag = regexp.MustCompile(`\n  -[a-z]`)

// Issue 9 item 8: the CLI's rough edges, as the built binary shows them.
func TestCLISaysWhatIsWrongInOneLine(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, 2, "fairway: unknown command \"frobnicate\"; run 'fairway help' for the list of commands\n"},
		{[]string{"stauts", "x"}, 2, "fairway: unknown command \"stauts\" (did you mean \"status\"?); run 'fairway help' for the list of commands\n"},
		{[]string{"list", "--bogus"}, 2, "fairway: list: unknown flag --bogus\nRun 'fairway list -h' for usage.\n"},
		{[]string{"dev", "--slots", "many"}, 2, "fairway dev: --slots: want a whole number, got \"many\"\nRun 'fairway dev -h' for usage.\n"},
		{[]string{"list", "--state", "bogus"}, 2, "fairway: list: --state: unknown state \"bogus\"; the states are blocked, pending, leased, running, retry_wait, succeeded, failed, cancelled\n"},
	}
	for _, c := range cases {
		code, out := runCLI(t, url, c.args...)
		if code != c.code || !strings.HasPrefix(out, c.want) || strings.Count(out, "\n") > 2 {
			t.Errorf("fairway %s: exit %d\n%s\nwant exit %d and\n%s", strings.Join(c.args, " "), code, out, c.code, c.want)
		}
	}
	for _, cmd := range []string{"dev", "server", "worker", "submit", "list"} {
		code, out := runCLI(t, url, cmd, "-h")
		parts := strings.SplitN(out, "\n\n", 3)
		if code != 0 || len(parts) < 3 || !strings.HasPrefix(parts[0], "usage: fairway "+cmd) ||
			!strings.HasSuffix(parts[1], ".") || !strings.HasPrefix(parts[2], "flags:\n  --") || singleDashFlag.MatchString(out) {
			t.Errorf("fairway %s -h: exit %d; want a usage line, a sentence, and --flags:\n%s", cmd, code, out)
		}
	}
	// A job with no command that no worker could run without one is
	// refused at submit, not failed at start.
	code, out := runCLI(t, url, "submit", "demo")
	if code != 4 || !strings.Contains(out, "no command") || !strings.Contains(out, "fairway submit demo -- echo hi") {
		t.Errorf("submit without a command: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "list", "--json", "--state", "pending,failed"); code != 0 || strings.Contains(out, `"type": "demo"`) {
		t.Errorf("a refused job was stored:\n%s", out)
	}
}

// Issue 9 item 9: list shows why each waiting job waits, as squeue's
// REASON column does.
func TestListShowsWhyAJobWaits(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	running := submitID(t, url, "long", "--", "sleep", "30")
	eventually(t, 30*time.Second, "the first job to run", func() bool {
		return strings.Contains(statusOf(t, url, running), "running")
	})
	behind := submitID(t, url, "demo", "--", "true")
	later := submitID(t, url, "--run-at", "+10m", "demo", "--", "true")
	after := submitID(t, url, "--after", later, "demo", "--", "true")
	code, out := runCLI(t, url, "list")
	if code != 0 || !strings.Contains(out, "  REASON  ") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	// behind fits no free slot and ranks first: it reserves the worker (issue 26).
	for id, reason := range map[string]string{running: "  running  -  ", behind: "  pending  reserved  ",
		later: "  blocked  not_yet_due  ", after: "  blocked  waiting_dependency  "} {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, id) {
				line = strings.Join(strings.Fields(l), "  ")
			}
		}
		if !strings.Contains(line+"  ", reason) {
			t.Errorf("job %s: line %q, want %q", id, line, strings.TrimSpace(reason))
		}
	}
}
