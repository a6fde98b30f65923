package ui

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Issue 28 item 19: docs/ui.md gives the address of every page the UI
// routes to (app.js's route), so that people can link to a page.
func TestDocsGiveEveryPageAddress(t *testing.T) {
	app, err := static.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/ui.md")
	if err != nil {
		t.Fatal(err)
	}
	// Routes read `path === "/jobs"` or `path.startsWith("/job/")`.
	routes := regexp.MustCompile(`path === "(/[a-z/]*)"|path\.startsWith\("(/[a-z]+/)"\)`).FindAllStringSubmatch(string(app), -1)
	if len(routes) < 5 {
		t.Fatalf("found %d routes in app.js; has route() changed shape?", len(routes))
	}
	seen := map[string]bool{}
	for _, r := range routes {
		want := "`#" + r[1] + "`"
		if r[2] != "" {
			want = "`#" + r[2] // followed by the id: #/job/ID
		}
		if seen[want] {
			continue
		}
		seen[want] = true
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/ui.md does not give the page address %s", want)
		}
	}
}
