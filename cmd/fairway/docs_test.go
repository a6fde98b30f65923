package main

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// Issue 28 item 27: the command lists at the top of docs/cli.md and of
// the README name every command the binary has.
func TestDocsListEveryCommand(t *testing.T) {
	cliDoc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(cliDoc)[:strings.Index(string(cliDoc), "## ")]
	intro := string(readme)[:strings.Index(string(readme), "## Set up")]
	// Not clients of a server: each has its own document.
	elsewhere := map[string]bool{"server": true, "dev": true, "worker": true, "sim": true, "bench": true}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !elsewhere[n] && !strings.Contains(table, "`fairway "+n) {
			t.Errorf("the table at the top of docs/cli.md does not list %q", n)
		}
		named := false
		for _, form := range []string{"`" + n + "`", "`" + n + " ", "`fairway " + n + "`", "`fairway " + n + " "} {
			named = named || strings.Contains(intro, form)
		}
		if !named {
			t.Errorf("the README's introduction does not name %q", n)
		}
	}
}

// Issue 28 item 28: the README's set-up keeps its two commands, and says
// that the first go run compiles SQLite for minutes and how to avoid
// waiting blind (make build).
func TestREADMESetUpSaysTheFirstBuildIsSlow(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	setUp := string(readme)[strings.Index(string(readme), "## Set up"):]
	setUp = setUp[:strings.Index(setUp, "`fairway dev` prints its address")]
	block := setUp[strings.Index(setUp, "```sh\n")+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		commands = append(commands, strings.TrimSpace(strings.SplitN(line, "#", 2)[0]))
	}
	if len(commands) != 2 || commands[0] != "go run ./cmd/fairway dev" || commands[1] != "make test" {
		t.Errorf("the set-up block is not the two commands go run ./cmd/fairway dev and make test: %q", commands)
	}
	for _, want := range []string{"compiles SQLite", "3 minutes", "`make build`"} {
		if !strings.Contains(setUp, want) {
			t.Errorf("the set-up section does not say %q:\n%s", want, setUp)
		}
	}
}
