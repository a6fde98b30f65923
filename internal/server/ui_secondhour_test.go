package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/fairwayhq/fairway/api"
)

// uiPage is a browser on a server in open mode whose clock starts at the
// wall clock's second (so that a running attempt's elapsed time, which the
// page counts from the browser's clock, is small).
type uiPage struct {
	t   *testing.T
	ctx context.Context
	h   *harness
	// loaded is set once the page is loaded: other pages are shown by
	// their fragment (showPage).
	loaded bool
}

func newUIPage(t *testing.T) *uiPage {
	t.Helper()
	ctx := browser(t)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Second)}
	h := startHarness(t, defaultConfig(), filepath.Join(t.TempDir(), "fairway.db"), clock)
	return &uiPage{t: t, ctx: ctx, h: h}
}

func (p *uiPage) run(actions ...chromedp.Action) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, actions...); err != nil {
		p.t.Fatal(err)
	}
}

// open shows a page (a hash route such as "#/jobs") and waits until sel
// shows want.
func (p *uiPage) open(route, sel, want string) {
	p.t.Helper()
	if !p.loaded {
		p.run(chromedp.Navigate(p.h.http.URL + "/" + route))
		p.loaded = true
	} else {
		p.run(showPage(route))
	}
	p.waitText(sel, want)
}

func (p *uiPage) waitText(sel, want string) {
	p.t.Helper()
	waitForText(p.t, p.ctx, sel, want)
}

// waitForText waits up to 15 s until the page's sel shows want, read
// through chromedp's DOM or, failing that, in the page itself, failing the
// test with what it shows otherwise.
func waitForText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var s, direct string
		_ = runBriefly(ctx, chromedp.Text(sel, &s, chromedp.NodeVisible))
		if strings.Contains(s, want) {
			return
		}
		// The same text read in the page, not through chromedp's view of
		// the DOM, which can lag behind a page that replaced its nodes.
		_ = runBriefly(ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const n = document.querySelector(%q); return n && n.checkVisibility() ? n.innerText : ""; })()`, sel), &direct))
		if strings.Contains(direct, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("the page when the wait ended: %s", pageState(ctx))
			t.Fatalf("%s never showed %q; it shows %q (read in the page: %q)", sel, want, s, direct)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageState describes the page for a failed wait: the route, the visible
// headings and the start of main's HTML, read with Runtime.evaluate rather
// than through chromedp's view of the DOM (TestTheWebUIInABrowser once
// waited 15 s for an h1 it never saw, under load).
func pageState(ctx context.Context) string {
	var s string
	if err := runBriefly(ctx, chromedp.Evaluate(`location.hash + " | h1: " +
		[...document.querySelectorAll("h1")].map((h) => JSON.stringify(h.textContent) + (h.checkVisibility() ? "" : " (hidden)")).join(", ") +
		" | main: " + (document.querySelector("main") || { innerHTML: "(none)" }).innerHTML.slice(0, 800)`, &s)); err != nil {
		return "unreadable: " + err.Error()
	}
	return s
}

// runBriefly runs action for at most 2 s: a replaced node must not hold
// a wait.
func runBriefly(ctx context.Context, action chromedp.Action) error {
	look, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return chromedp.Run(look, action)
}

func (p *uiPage) eval(js string, out any) {
	p.t.Helper()
	p.run(chromedp.Evaluate(js, out))
}

// column is the text of each body cell under the header named header, in
// the first table (under sel) that has that header.
func (p *uiPage) column(sel, header string) []string {
	p.t.Helper()
	var out []string
	p.eval(fmt.Sprintf(`(() => {
		for (const t of document.querySelectorAll(%q + " table")) {
			const i = [...t.querySelectorAll("thead th")].findIndex((th) => th.textContent.trim() === %q);
			if (i < 0) continue;
			return [...t.querySelectorAll("tbody tr")].map((tr) => tr.children[i] ? tr.children[i].textContent.trim() : "");
		}
		return [];
	})()`, sel, header), &out)
	return out
}

// cutActions lists the row actions of the page's tables (buttons and
// links) that are not wholly visible: outside the window, clipped by a
// scrolling box around them, or with their label cut.
const cutActions = `(() => {
	const bad = [];
	for (const b of document.querySelectorAll("main table .actions > *")) {
		const r = b.getBoundingClientRect();
		let left = 0, right = window.innerWidth;
		for (let p = b.parentElement; p; p = p.parentElement) {
			if (getComputedStyle(p).overflowX === "visible") continue;
			const pr = p.getBoundingClientRect();
			left = Math.max(left, pr.left); right = Math.min(right, pr.right);
		}
		let covered = false;
		const hit = document.elementFromPoint(Math.min(Math.max(r.left + 2, 0), window.innerWidth - 1), r.top + r.height / 2);
		if (hit && hit !== b && !b.contains(hit)) covered = true;
		if (r.width === 0 || r.left < left - 0.5 || r.right > right + 0.5 || b.scrollWidth > b.clientWidth + 1 || covered)
			bad.push(b.textContent + " at " + Math.round(r.left) + "-" + Math.round(r.right) + " in " + Math.round(left) + "-" + Math.round(right) + (covered ? " (covered)" : ""));
	}
	return bad;
})()`

// Issue 28 item 15: on wide screens the page uses the width, and every
// row action on the jobs and schedules pages is wholly visible, whatever
// the rows hold.
func TestUIRowActionsFitWideScreens(t *testing.T) {
	p := newUIPage(t)
	h := p.h
	long := strings.Repeat("nightly-warehouse-rebuild-", 3)
	held := h.submit(api.JobSpec{Type: "report", Name: "held " + long, Command: []string{"sh", "-c", strings.Repeat("echo hi; ", 20)}})
	if code := h.do("POST", "/jobs/"+held.ID+"/hold", struct{}{}, nil); code != http.StatusOK {
		t.Fatalf("hold: HTTP %d", code)
	}
	failed := h.submit(api.JobSpec{Type: "report", Name: "failed " + long, MaxAttempts: 1, Tags: []string{"team-analytics", "nightly", "warehouse"},
		Command: []string{"python3", "-m", "warehouse.rebuild", "--since", "2026-01-01", "--partitions", strings.Repeat("p", 60)}})
	running := h.submit(api.JobSpec{Type: "report", Name: "running " + long, Command: []string{"sleep", "600"}})
	w := h.register(api.RegisterRequest{Name: "wide-worker", Slots: 2})
	h.lease(w, 2)
	h.start(w, running.ID, 1)
	h.complete(w, api.Completion{JobID: failed.ID, Attempt: 1, Outcome: "failed", FailureClass: "exit_code", ExitCode: intp(3),
		Error: "exit status 3: " + strings.Repeat("the warehouse partition could not be read; ", 4)})
	h.submit(api.JobSpec{Type: "report", Name: "pending " + long, Tags: []string{"a-rather-long-tag-name"}})
	var sc api.Schedule
	if code := h.do("POST", "/schedules", api.ScheduleSpec{Name: long + "schedule", Spec: "*/5 * * * *", Timezone: "America/Argentina/Buenos_Aires",
		Template: api.JobSpec{Type: "report", Command: []string{"true"}}}, &sc); code != http.StatusCreated {
		t.Fatalf("create schedule: HTTP %d", code)
	}
	if code := h.do("POST", "/schedules/"+sc.ID+"/trigger", struct{}{}, nil); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("trigger: HTTP %d", code)
	}

	for _, width := range []int64{1400, 1920} {
		p.run(chromedp.EmulateViewport(width, 900))
		for _, page := range []struct{ route, want string }{{"#/jobs", held.ID}, {"#/schedules", "Trigger"}} {
			p.open(page.route, "main", page.want)
			var cut []string
			p.eval(cutActions, &cut)
			if len(cut) > 0 {
				t.Errorf("%s at %d px: row actions not wholly visible: %q", page.route, width, cut)
			}
			if width == 1920 {
				var scrolls []string
				p.eval(`[...document.querySelectorAll("main .scroll")].filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.scrollWidth + " > " + s.clientWidth)`, &scrolls)
				if len(scrolls) > 0 {
					t.Errorf("%s at %d px: tables scroll sideways: %q", page.route, width, scrolls)
				}
			}
			var mainWidth float64
			p.eval(`document.querySelector("main").getBoundingClientRect().width`, &mainWidth)
			if mainWidth < float64(width)-80 {
				t.Errorf("%s at %d px: the content is %.0f px wide: it does not use the width", page.route, width, mainWidth)
			}
			screenshot(t, p.ctx, fmt.Sprintf("%s-%d", strings.TrimPrefix(page.route, "#/"), width))
		}
	}
	// And on a phone: the actions stay in view while the table scrolls.
	p.run(chromedp.EmulateViewport(390, 844))
	p.open("#/jobs", "main", held.ID)
	var cut []string
	p.eval(cutActions, &cut)
	if len(cut) > 0 {
		t.Errorf("#/jobs at 390 px: row actions not wholly visible: %q", cut)
	}
}

// rowOf is the index of the row whose "Job" cell holds id.
func rowOf(t *testing.T, ids []string, id string) int {
	t.Helper()
	for i, s := range ids {
		if strings.Contains(s, id) {
			return i
		}
	}
	t.Fatalf("no row for %s in %q", id, ids)
	return -1
}

// Issue 28 item 16: the jobs list says what each job is (name, tags, a
// command summary) and, for a failed job, its failure class and last
// error; a running job's attempt shows its worker, start and elapsed time;
// a retried job's logs are told apart by attempt, as the CLI prints them;
// a job that ends while shown is shown ended.
func TestUIJobsSayWhatEachJobIs(t *testing.T) {
	p := newUIPage(t)
	h := p.h
	named := h.submit(api.JobSpec{Type: "report", Name: "nightly-report", Tags: []string{"team-a", "nightly"},
		Command: []string{"python3", "report.py", "--title", "Q4 sales"}})
	failed := h.submit(api.JobSpec{Type: "report", Name: "doomed", MaxAttempts: 2, Command: []string{"sh", "-c", "exit 3"},
		Retry: &api.RetryPolicy{Kind: "immediate"}})
	w := h.register(api.RegisterRequest{Name: "attempt-worker", Slots: 1, Types: []string{"report"}})

	// named runs; failed fails twice, with output in each attempt.
	h.lease(w, 1)
	h.start(w, named.ID, 1)
	appendLog := func(id string, attempt int, seq int64, data string) {
		t.Helper()
		if code := h.do("POST", "/workers/"+w+"/logs", api.LogAppendRequest{Chunks: []api.LogChunk{
			{JobID: id, Attempt: attempt, Stream: "stdout", Seq: seq, At: h.clock.Now(), Data: data}}}, nil); code != http.StatusOK {
			t.Fatalf("append logs: HTTP %d", code)
		}
	}
	h.complete(w, api.Completion{JobID: named.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})
	for attempt := 1; attempt <= 2; attempt++ {
		h.tick()
		if got := h.lease(w, 1); len(got) != 1 || got[0].Job.ID != failed.ID {
			t.Fatalf("attempt %d: leased %+v", attempt, got)
		}
		h.start(w, failed.ID, attempt)
		appendLog(failed.ID, attempt, int64(attempt), fmt.Sprintf("output of attempt %d\n", attempt))
		h.complete(w, api.Completion{JobID: failed.ID, Attempt: attempt, Outcome: "failed", FailureClass: "exit_code",
			ExitCode: intp(2 + attempt), Error: fmt.Sprintf("exit status %d: disk full", 2+attempt)})
	}
	if got := h.get(failed.ID); got.State != api.StateFailed {
		t.Fatalf("the doomed job is %s", got.State)
	}
	// A third job runs now.
	running := h.submit(api.JobSpec{Type: "report", Name: "long-one", Command: []string{"sleep", "600"}})
	h.tick()
	h.lease(w, 1)
	h.start(w, running.ID, 1)

	p.open("#/jobs", "main", failed.ID)
	ids := p.column("main", "Job")
	commands, tags, why := p.column("main", "Command"), p.column("main", "Tags"), p.column("main", "Why / last error")
	if len(ids) == 0 || len(commands) != len(ids) || len(tags) != len(ids) || len(why) != len(ids) {
		t.Fatalf("the jobs table lacks columns: Job %q, Command %q, Tags %q, Why / last error %q", ids, commands, tags, why)
	}
	n := rowOf(t, ids, named.ID)
	if !strings.Contains(ids[n], "nightly-report") || commands[n] != `python3 report.py --title "Q4 sales"` ||
		!strings.Contains(tags[n], "team-a") || !strings.Contains(tags[n], "nightly") {
		t.Errorf("the named job's row: job %q, command %q, tags %q", ids[n], commands[n], tags[n])
	}
	f := rowOf(t, ids, failed.ID)
	if !strings.Contains(why[f], "exit_code") || !strings.Contains(why[f], "exit status 4: disk full") {
		t.Errorf("the failed job's row says %q, want its failure class and last error", why[f])
	}
	screenshot(t, p.ctx, "jobs-described")

	// The running job's attempt: worker, start, elapsed.
	p.open("#/job/"+running.ID, "main", "Attempts")
	workers, started, elapsed := p.column("main", "Worker"), p.column("main", "Started"), p.column("main", "Elapsed")
	if len(workers) != 1 || len(started) != 1 || len(elapsed) != 1 {
		t.Fatalf("the running job's attempts: worker %q, started %q, elapsed %q; want one row", workers, started, elapsed)
	}
	if workers[0] != "attempt-worker" || !timeFormat.MatchString(started[0]) || !regexp.MustCompile(`^\d+(\.\d)? (ms|s|min|h|d)$`).MatchString(elapsed[0]) {
		t.Errorf("the running attempt shows worker %q, started %q, elapsed %q", workers[0], started[0], elapsed[0])
	}

	// It ends while shown: the page shows it ended.
	h.complete(w, api.Completion{JobID: running.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})
	p.waitText("#attempts", "succeeded")

	// The failed job's logs, one header per attempt.
	p.open("#/job/"+failed.ID, "#logs", "ended: failed")
	var logs string
	p.run(chromedp.Text("#logs", &logs))
	want := "==> attempt 1 of 2 on attempt-worker: failed, exit code 3 <==\noutput of attempt 1\n" +
		"==> attempt 2 of 2 on attempt-worker: failed, exit code 4 <==\noutput of attempt 2\n"
	if !strings.Contains(logs, want) {
		t.Errorf("the logs read %q, want attempts told apart as %q", logs, want)
	}
	screenshot(t, p.ctx, "job-attempts")
}

// Issue 28 item 17: the overview defines Pending and Queued where it shows
// them.
func TestUIDefinesPendingAndQueued(t *testing.T) {
	p := newUIPage(t)
	p.h.submit(api.JobSpec{Type: "report"})
	p.open("#/", "main", "Lanes")
	var titles map[string]string
	p.eval(`Object.fromEntries([...document.querySelectorAll("main th")].map((th) => [th.textContent.trim(), th.title]))`, &titles)
	if !strings.Contains(titles["Pending"], "not running") || !strings.Contains(titles["Queued"], "could start now") {
		t.Errorf("the lane table's headers explain nothing: Pending %q, Queued %q", titles["Pending"], titles["Queued"])
	}
	var legend string
	p.eval(`(document.querySelector("#lane-legend") || {}).textContent || ""`, &legend)
	if !strings.Contains(legend, "Pending") || !strings.Contains(legend, "not running") ||
		!strings.Contains(legend, "Queued") || !strings.Contains(legend, "could start now") {
		t.Errorf("the lanes legend reads %q, want Pending and Queued defined", legend)
	}
}

// timeFormat is the UI's one way to write a time: date, time to the
// second, and the zone.
var timeFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([A-Z]{2,5}|GMT[+-]\d{1,2}(:\d\d)?)$`)

// Issue 28 item 18: every time in the UI is written one way and names its
// zone: the browser's, or a schedule's own for its slots.
func TestUITimesOneFormatNamingTheZone(t *testing.T) {
	p := newUIPage(t)
	h := p.h
	p.run(emulation.SetTimezoneOverride("America/New_York"))
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone database")
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	const layout = "2006-01-02 15:04:05 MST"

	job := h.submit(api.JobSpec{Type: "report", Command: []string{"true"}})
	w := h.register(api.RegisterRequest{Name: "tz-worker", Slots: 1})
	h.lease(w, 1)
	h.start(w, job.ID, 1)
	var sc api.Schedule
	if code := h.do("POST", "/schedules", api.ScheduleSpec{Name: "berlin", Spec: "0 9 * * *", Timezone: "Europe/Berlin",
		Template: api.JobSpec{Type: "report", Command: []string{"true"}}}, &sc); code != http.StatusCreated {
		t.Fatalf("create schedule: HTTP %d", code)
	}
	if code := h.do("POST", "/schedules/"+sc.ID+"/trigger", struct{}{}, nil); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("trigger: HTTP %d", code)
	}
	h.do("GET", "/schedules/"+sc.ID, nil, &sc)
	if sc.NextRunAt == nil || sc.LastRunAt == nil {
		t.Fatalf("the schedule has next %v, last %v", sc.NextRunAt, sc.LastRunAt)
	}

	check := func(where string, got []string, want ...string) {
		t.Helper()
		if len(got) == 0 {
			t.Errorf("%s: no time shown", where)
		}
		for i, s := range got {
			if !timeFormat.MatchString(s) {
				t.Errorf("%s: %q is not written as 2006-01-02 15:04:05 ZONE", where, s)
			} else if i < len(want) && want[i] != "" && s != want[i] {
				t.Errorf("%s: %q, want %q", where, s, want[i])
			}
		}
	}
	p.open("#/jobs", "main", job.ID)
	check("jobs: Created", p.column("main", "Created"), job.CreatedAt.In(newYork).Format(layout))
	p.open("#/job/"+job.ID, "main", "Timeline")
	check("job: attempt Started", p.column("main", "Started"), h.get(job.ID).StartedAt.In(newYork).Format(layout))
	check("job: timeline At", p.column("main", "At"))
	var created string
	p.eval(`[...document.querySelectorAll("dl.kv dt")].find((dt) => dt.textContent === "created").nextElementSibling.textContent`, &created)
	check("job: created", []string{created}, job.CreatedAt.In(newYork).Format(layout))
	p.open("#/schedules", "main", "berlin")
	check("schedules: Next run", p.column("main", "Next run"), sc.NextRunAt.In(berlin).Format(layout))
	check("schedules: Last run", p.column("main", "Last run"), sc.LastRunAt.In(berlin).Format(layout))
	p.open("#/schedule/"+sc.ID, "main", "Next runs")
	var upcoming []string
	p.eval(`[...document.querySelectorAll("#upcoming li")].map((li) => li.textContent)`, &upcoming)
	check("schedule: next runs", upcoming, sc.NextRunAt.In(berlin).Format(layout))
	check("schedule: recent Slot", p.column("main", "Slot"))
	p.open("#/workers", "main", "tz-worker")
	check("workers: Last heartbeat", p.column("main", "Last heartbeat"))
	screenshot(t, p.ctx, "times")
}
