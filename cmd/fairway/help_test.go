package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// helpOf runs "fairway ARGS... -h" and returns what it printed.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCmd(t, append(args, "-h")...)
	if code != 0 {
		t.Fatalf("%v -h: exit %d: %s", args, code, errOut)
	}
	return out + errOut
}

// Item 13 of issue 28: the help of every command and verb names flags as
// they are typed, offers only flags the command takes, and says a default
// once; value placeholders are words, not Go type names.
func TestHelpText(t *testing.T) {
	var pages [][]string
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pages = append(pages, []string{n})
	}
	for verb := range scheduleVerbs {
		pages = append(pages, []string{"schedule", verb})
	}
	for verb := range reportVerbs {
		pages = append(pages, []string{"report", verb})
	}
	for verb := range webhookVerbs {
		pages = append(pages, []string{"webhooks", verb})
	}
	pages = append(pages, []string{"keys", "create"}, []string{"keys", "list"}, []string{"lane", "pause"})
	goType := regexp.MustCompile(`(?m)^  --?[a-z-]+ (string|int|int64|uint|float|float64|duration|value)$`)
	oneDashLong := regexp.MustCompile(`(?m)^  -[a-z][a-z-]+\b`)
	twoDashShort := regexp.MustCompile(`(?m)^  --[a-z]\b`)
	for _, p := range pages {
		help := helpOf(t, p...)
		for _, line := range strings.Split(help, "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%v: a default said twice: %q", p, line)
			}
		}
		if m := goType.FindString(help); m != "" {
			t.Errorf("%v: a Go type as a placeholder: %q", p, m)
		}
		if m := twoDashShort.FindString(help); m != "" {
			t.Errorf("%v: a one-letter flag with two dashes: %q", p, m)
		}
		if m := oneDashLong.FindString(help); m != "" {
			t.Errorf("%v: a long flag with one dash: %q", p, m)
		}
	}
	if logs := helpOf(t, "logs"); !strings.Contains(logs, "\n  -f\n") {
		t.Errorf("logs -h does not offer -f:\n%s", logs)
	}
	for _, verb := range []string{"create", "update"} {
		help := helpOf(t, "schedule", verb)
		for _, flag := range []string{"--wait", "--run-at", "--after", "--idempotency-key"} {
			if strings.Contains(help, "  "+flag+" ") || strings.Contains(help, "  "+flag+"\n") {
				t.Errorf("schedule %s -h offers %s, which a schedule refuses", verb, flag)
			}
		}
		if !strings.Contains(help, "  --payload ") || !strings.Contains(help, "  --max-attempts ") {
			t.Errorf("schedule %s -h lacks the job template's flags:\n%s", verb, help)
		}
	}
	code, _, errOut := runCmd(t, "schedule", "create", "--spec", "every 1m", "--wait", "report")
	if code != exitUsage || !strings.Contains(errOut, "unknown flag --wait") {
		t.Errorf("schedule create --wait: exit %d: %s", code, errOut)
	}
}
