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
