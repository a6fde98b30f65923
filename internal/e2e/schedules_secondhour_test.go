package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 28 items 1, 18, 33 and 34 as a user meets them with `fairway
// dev`: a schedule a submit would refuse, one that could never fire and
// one past the time bound are refused with exit 4 naming the field; the
// list names the zone of each time.
func TestScheduleCreateRefusesWhatCouldNeverRun(t *testing.T) {
	url, _ := startDev(t, "--slots", "1")
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"schedule", "create", "--spec", "every 1m", "--name", "nocmd", "demo"}, "template.command"},
		{[]string{"schedule", "create", "--spec", "at " + past, "demo", "--", "true"}, "in the past"},
		{[]string{"schedule", "create", "--spec", "every 1m", "--end", past, "demo", "--", "true"}, "end_at"},
		{[]string{"schedule", "create", "--spec", "every 1000000h", "demo", "--", "true"}, "87600h"},
	}
	for _, c := range cases {
		if code, out := runCLI(t, url, c.args...); code != 4 || !strings.Contains(out, c.want) {
			t.Errorf("fairway %s: exit %d, want 4 saying %q\n%s", strings.Join(c.args, " "), code, c.want, out)
		}
	}
	if code, out := runCLI(t, url, "schedule", "list"); code != 0 || strings.Contains(out, "nocmd") {
		t.Errorf("a refused schedule was stored: exit %d\n%s", code, out)
	}
	if code, out := runCLI(t, url, "schedule", "create", "--spec", "0 9 * * *", "--timezone", "Europe/Berlin", "--name", "berlin", "demo", "--", "true"); code != 0 {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	code, out := runCLI(t, url, "schedule", "list")
	if code != 0 || !regexpMatch(`berlin .* \d{4}-\d\d-\d\d 09:00:00 CES?T`, out) {
		t.Errorf("the list does not name the zone of NEXT_RUN: exit %d\n%s", code, out)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
