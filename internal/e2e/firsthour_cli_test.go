package e2e

import (
	"strings"
	"testing"
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
