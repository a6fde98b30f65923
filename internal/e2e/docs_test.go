package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's quickstart and every example in docs/cli.md are read from
// the Markdown and run against `fairway dev`, so that the docs cannot
// drift from the binary.
//
// What is run: every fenced block tagged sh. In a block with "$ " prompts
// each prompted line (joined with its "\" continuations) is one command,
// and the other lines are its output, shown to the reader and not
// compared (ids and times differ). A block without prompts is one script,
// run with set -e. A command expects exit 0 unless it ends with a comment
// "# exits N". Commands run in one shell per document, in order, so that a
// variable set by one example (id=$(fairway submit ...)) serves the next.
//
// What is not run: the set-up lines (go run ./cmd/fairway dev, make test,
// make build, go install), whose effect the test provides: `fairway` is
// the binary under test and a dev server is running. The docs' address
// 127.0.0.1:7070 is replaced by the dev server's.

// docCommand is one command of a document, with where it was read.
type docCommand struct {
	text   string
	exit   int
	script bool // a whole prompt-less block
	where  string
}

var (
	fenceOpen  = regexp.MustCompile("^```sh\\s*$")
	exitsNote  = regexp.MustCompile(`#\s*exits (\d+)\s*$`)
	setupLines = regexp.MustCompile(`^(go run \./cmd/fairway dev|make (test|build)|go install)\b`)
)

// docCommands reads the runnable commands of a Markdown file.
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	var block []string
	start, in := 0, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && fenceOpen.MatchString(line):
			in, block, start = true, nil, n+1
		case in && strings.HasPrefix(line, "```"):
			in = false
			out = append(out, blockCommands(block, fmt.Sprintf("%s:%d", filepath.Base(path), start))...)
		case in:
			block = append(block, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func blockCommands(lines []string, where string) []docCommand {
	prompted := false
	for _, l := range lines {
		prompted = prompted || strings.HasPrefix(l, "$ ")
	}
	if !prompted {
		var kept []string
		for _, l := range lines {
			if !setupLines.MatchString(strings.TrimSpace(l)) {
				kept = append(kept, l)
			}
		}
		if strings.TrimSpace(strings.Join(kept, "")) == "" {
			return nil
		}
		return []docCommand{{text: strings.Join(kept, "\n"), script: true, where: where}}
	}
	var out []docCommand
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "$ ") {
			continue
		}
		text := strings.TrimPrefix(lines[i], "$ ")
		for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
			i++
			text += "\n" + lines[i]
		}
		c := docCommand{text: text, where: where}
		if m := exitsNote.FindStringSubmatch(text); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		if !setupLines.MatchString(text) {
			out = append(out, c)
		}
	}
	return out
}

// docScript is the shell script that runs cmds in order and stops at the
// first that exits otherwise than documented.
func docScript(cmds []docCommand, server string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "fairway() { %q \"$@\"; }\nexport FAIRWAY_SERVER=%s\n", binary, server)
	for _, c := range cmds {
		text := strings.ReplaceAll(c.text, "http://127.0.0.1:7070", server)
		if c.script {
			text = "( set -e\n" + text + "\n)"
		}
		fmt.Fprintf(&b, "echo %q\n{ %s\n}; rc=$?\n", "### "+c.where+": "+firstLine(c.text), text)
		fmt.Fprintf(&b, "if [ $rc -ne %d ]; then echo %q \"exit $rc, want %d\" >&2; exit 97; fi\n(exit $rc)\n",
			c.exit, "docs: "+c.where+": "+firstLine(c.text)+": ", c.exit)
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// runDoc runs a document's commands against a fresh `fairway dev`;
// minLines guards against examples silently dropping out of the test
// (a block no longer tagged sh).
func runDoc(t *testing.T, path string, minLines int) {
	cmds := docCommands(t, path)
	lines := 0
	for _, c := range cmds {
		for _, l := range strings.Split(c.text, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines++
			}
		}
	}
	if lines < minLines {
		t.Fatalf("%s: %d runnable lines found, want at least %d: is every example block still tagged sh?", path, lines, minLines)
	}
	url, _ := startDev(t, "--slots", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", docScript(cmds, url))
	cmd.Dir = filepath.Join("..", "..") // the repository root: examples name scenarios/...
	cmd.Env = append(os.Environ(), "FAIRWAY_SERVER="+url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, out)
	}
}

// Issue 9 acceptance: the README's quickstart runs as written.
func TestREADMEQuickstartRuns(t *testing.T) {
	runDoc(t, filepath.Join("..", "..", "README.md"), 5)
}

// Issue 9 acceptance: every example of docs/cli.md runs as written.
func TestCLIDocExamplesRun(t *testing.T) {
	runDoc(t, filepath.Join("..", "..", "docs", "cli.md"), 20)
}
