package main

import (
	"strings"
	"testing"
)

func TestEveryCommandHelpExitsZero(t *testing.T) {
	for name := range commands {
		code, out, errOut := runCmd(t, name, "-h")
		if code != 0 {
			t.Errorf("fairway %s -h: exit %d, want 0", name, code)
		}
		if !strings.Contains(out+errOut, "-") {
			t.Errorf("fairway %s -h printed no flags: %q", name, out+errOut)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, out, errOut := runCmd(t, arg)
		if code != 0 || !strings.HasPrefix(out, "fairway ") || !strings.Contains(out, "go1.") || errOut != "" {
			t.Errorf("fairway %s: exit %d, stdout %q, stderr %q", arg, code, out, errOut)
		}
	}
}
