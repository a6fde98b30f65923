package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smallScenario = "../../scenarios/seed001-1-bg-saturated.yaml"

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSimText(t *testing.T) {
	code, out, stderr := runCmd(t, "sim", smallScenario)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{
		"T=  3.000 ARRIVE sync-clone(r99, fk=dev1) lane=default prio=8",
		"T=  3.000 ADMIT sync-clone(r99, fk=dev1) lane=default worker=pool score=8 cost=10 wait=0.000",
		"T=  5.000 DONE sync-clone(r99, fk=dev1) lane=default worker=pool ran=2.000",
		"\nsummary\n", "jobs 11  admitted 11  done 11", "fairness_key", "jain_index",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimJSONL(t *testing.T) {
	code, out, stderr := runCmd(t, "sim", "--format", "jsonl", smallScenario)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kinds := map[string]int{}
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, line)
		}
		kind, _ := obj["event"].(string)
		kinds[kind]++
		switch kind {
		case "admit":
			for _, f := range []string{"t", "id", "type", "key", "fairness_key", "lane", "worker", "score", "cost"} {
				if _, ok := obj[f]; !ok {
					t.Errorf("admit lacks %q: %s", f, line)
				}
			}
		case "summary":
			if i != len(lines)-1 {
				t.Errorf("summary is not the last line")
			}
			for _, f := range []string{"jobs", "jain_index", "utilisation", "makespan", "decisions", "decisions_per_second", "fairness_keys", "lanes"} {
				if _, ok := obj[f]; !ok {
					t.Errorf("summary lacks %q", f)
				}
			}
			lane := obj["lanes"].(map[string]any)["default"].(map[string]any)
			for _, f := range []string{"jobs", "mean_wait", "p50_wait", "p99_wait", "max_wait", "capacity_share"} {
				if _, ok := lane[f]; !ok {
					t.Errorf("lane stats lack %q", f)
				}
			}
		}
	}
	if kinds["arrive"] != 11 || kinds["admit"] != 11 || kinds["done"] != 11 || kinds["summary"] != 1 {
		t.Errorf("event counts %v", kinds)
	}
}

func TestSimQuietAndUntil(t *testing.T) {
	code, out, _ := runCmd(t, "sim", smallScenario, "--quiet", "--until", "4")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out, "T=") || !strings.Contains(out, "pending 6  running 5") {
		t.Errorf("quiet output at T=4:\n%s", out)
	}
}

func TestSimErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	doc := "pool: {slots: 1}\ntypes: {t: {}}\njobs:\n  - {type: t}\n  - {type: t, duration: -3}\n"
	if err := os.WriteFile(bad, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"bad scenario": {[]string{"sim", bad}, "jobs[1].duration: must be >= 0"},
		"no file":      {[]string{"sim"}, "want exactly one scenario FILE"},
		"two files":    {[]string{"sim", bad, bad}, "want exactly one scenario FILE"},
		"missing file": {[]string{"sim", "/nonexistent.yaml"}, "no such file"},
		"bad format":   {[]string{"sim", "--format", "xml", smallScenario}, `unknown format "xml"`},
		"bad until":    {[]string{"sim", "--until", "-1", smallScenario}, "--until"},
		"unknown flag": {[]string{"sim", "--fast", smallScenario}, "unknown flag --"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runCmd(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q lacks %q", stderr, tc.want)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
		})
	}
}

func TestSimHelp(t *testing.T) {
	code, _, stderr := runCmd(t, "sim", "-h")
	if code != 0 || !strings.Contains(stderr, "usage: fairway sim") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
