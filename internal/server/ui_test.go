package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// browser starts a headless Chromium for the test, or skips when there is
// none (CI installs it and sets FAIRWAY_REQUIRE_BROWSER=1, which makes a
// missing browser a failure).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("FAIRWAY_REQUIRE_BROWSER") == "1" {
			t.Fatal("no Chromium on PATH and FAIRWAY_REQUIRE_BROWSER=1")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// showPage shows a page of the UI, once loaded, by setting the address's
// fragment (route, such as "#/jobs") as a link does; the same fragment
// again renders the page afresh. (chromedp.Navigate to a fragment can miss
// the same-document navigation's event on a loaded machine and then waits
// until the test's deadline.)
func showPage(route string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const h = %q; if (location.hash === h) route(); else location.hash = h; })()`, route), nil)
}

// screenshot saves the page as NAME.png in $FAIRWAY_UI_SCREENSHOTS (CI's
// artifacts, or docs/images when they change), else in the test's
// temporary directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("FAIRWAY_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The web UI in a real headless browser: sign in; the overview; a job
// submitted through the API appears, streams its logs and finishes; a
// pending job is cancelled from the page; explain shows a job blocked by
// its tenant's cap; a tenant key is denied another tenant's job.
func TestTheWebUIInABrowser(t *testing.T) {
	ctx := browser(t)
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{
		"acme":   {APIKeys: []string{"acme-key-0123456789"}, MaxRunning: 1},
		"globex": {APIKeys: []string{"globex-key-0123456789"}},
	}
	cfg.Workers.APIKeys = []string{"worker-key-0123456789"}
	h := newHarness(t, cfg)
	base := h.http.URL
	h.key = "globex-key-0123456789"
	theirs := h.submit(api.JobSpec{Type: "report"})
	h.key = "acme-key-0123456789"
	running := h.submit(api.JobSpec{Type: "report", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	h.key = "worker-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "ui-worker", Slots: 4})
	h.lease(w, 4) // acme's job and globex's; acme's cap of 1 holds the rest back
	h.start(w, running.ID, 1)
	h.key = "acme-key-0123456789"
	capped := h.submit(api.JobSpec{Type: "report"})

	text := func(sel string) string {
		t.Helper()
		var s string
		if err := chromedp.Run(ctx, chromedp.WaitVisible(sel), chromedp.Text(sel, &s)); err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	waitText := func(sel, want string) { t.Helper(); waitForText(t, ctx, sel, want) }

	// Sign in as admin.
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#apikey"),
		chromedp.SendKeys("#apikey", "admin-key-0123456789"), chromedp.Click("#signin")); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Lanes")
	if s := text("main"); !strings.Contains(s, "default") {
		t.Errorf("the overview lacks the default lane: %q", s)
	}
	waitText("#tenants", "1 of 1") // acme runs 1 of its max_running 1
	waitText("#costs", "acme")     // fair queuing's accumulated cost of acme's fairness key

	// The running job on the jobs page, then its detail with logs streaming.
	if err := chromedp.Run(ctx, showPage("#/jobs")); err != nil {
		t.Fatal(err)
	}
	waitText("main", running.ID)
	screenshot(t, ctx, "jobs")
	if err := chromedp.Run(ctx, showPage("#/job/"+running.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Timeline")
	waitText("main", "4bf92f3577b34da6a3ce929d0e0e4736") // the trace id, what a tracing backend finds it by
	h.key = "worker-key-0123456789"
	at := h.clock.Now()
	var appended api.LogAppendResponse
	if code := h.do("POST", "/workers/"+w+"/logs", api.LogAppendRequest{Chunks: []api.LogChunk{
		{JobID: running.ID, Attempt: 1, Stream: "stdout", Seq: 1, At: at, Data: "generating report\n"},
		{JobID: running.ID, Attempt: 1, Stream: "stderr", Seq: 2, At: at, Data: "3 rows skipped\n"},
	}}, &appended); code != http.StatusOK {
		t.Fatalf("append logs: HTTP %d", code)
	}
	waitText("#logs", "3 rows skipped")
	var stderrSpans int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll("#logs .stderr").length`, &stderrSpans)); err != nil || stderrSpans != 1 {
		t.Errorf("stderr told apart: %d spans (%v)", stderrSpans, err)
	}
	h.complete(w, api.Completion{JobID: running.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)})
	waitText("#logs", "ended: succeeded")
	waitText("#attempts", "succeeded") // shown again, ended
	screenshot(t, ctx, "job")

	// Explain for the job held back by acme's cap (its running job just
	// ended, so the capped one is leased now: hold it to see a pending one).
	h.key = "acme-key-0123456789"
	second := h.submit(api.JobSpec{Type: "report"})
	if err := chromedp.Run(ctx, showPage("#/job/"+second.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("#explain", "tenant_cap")
	screenshot(t, ctx, "explain")

	// Cancel the pending job from its page: two clicks (confirmation).
	if err := chromedp.Run(ctx, chromedp.Click(`//button[text()="Cancel"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="Confirm cancel?"]`, chromedp.BySearch)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.get(second.ID).State != api.StateCancelled {
		if time.Now().After(deadline) {
			t.Fatalf("the job cancelled from the page is %s", h.get(second.ID).State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := h.get(capped.ID).State; got != api.StateRunning && got != api.StatePending {
		t.Errorf("acme's capped job is %s", got)
	}

	// Retry a failed job from the jobs page: select it, then two clicks.
	h.key = "globex-key-0123456789"
	failed := h.submit(api.JobSpec{Type: "report", MaxAttempts: 1})
	h.key = "worker-key-0123456789"
	h.lease(w, 4)
	h.complete(w, api.Completion{JobID: failed.ID, Attempt: 1, Outcome: "failed", FailureClass: "exit_code"})
	if err := chromedp.Run(ctx, showPage("#/jobs?state=failed")); err != nil {
		t.Fatal(err)
	}
	waitText("main", failed.ID)
	h.key = "admin-key-0123456789"
	if err := chromedp.Run(ctx, chromedp.Click(`input[data-id="`+failed.ID+`"]`),
		chromedp.Click(`//button[text()="Retry selected"]`, chromedp.BySearch),
		chromedp.Click(`//button[text()="Confirm retry selected?"]`, chromedp.BySearch)); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for h.get(failed.ID).State == api.StateFailed {
		if time.Now().After(deadline) {
			t.Fatal("the job retried from the page is still failed")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The overview's charts of the last hour: the failed attempt as a bar,
	// the waits of the three leases as two lines.
	if err := chromedp.Run(ctx, showPage("#/")); err != nil {
		t.Fatal(err)
	}
	var series api.Series
	h.do("GET", "/series", nil, &series)
	var finished, leased, failedSteps int64
	for _, pt := range series.Points {
		for _, n := range pt.Finished {
			finished += n
		}
		leased += pt.Leased
		if pt.Finished["failed"] > 0 {
			failedSteps++
		}
	}
	if failedSteps == 0 {
		t.Fatalf("the series holds no failed attempt: %+v", series)
	}
	waitText("#activity", fmt.Sprintf("%d attempts finished, %d leased", finished, leased))
	var bars, lines int
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelectorAll("#throughput rect.s-bad").length`, &bars),
		chromedp.Evaluate(`document.querySelectorAll("#waits polyline").length`, &lines)); err != nil {
		t.Fatal(err)
	}
	if int64(bars) != failedSteps || lines != 2 {
		t.Errorf("the charts draw %d failure bars and %d wait lines, want %d and 2", bars, lines, failedSteps)
	}
	screenshot(t, ctx, "overview")

	// A schedule's page: its next runs in its zone.
	h.key = "admin-key-0123456789"
	var sc api.Schedule
	if code := h.do("POST", "/schedules", api.ScheduleSpec{Spec: "0 9 * * 1-5", Timezone: "Europe/Paris", Tenant: "acme",
		Template: api.JobSpec{Type: "report"}}, &sc); code != http.StatusCreated {
		t.Fatalf("create schedule: HTTP %d", code)
	}
	if err := chromedp.Run(ctx, showPage("#/schedule/"+sc.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Next runs")
	waitText("main", "Europe/Paris")
	screenshot(t, ctx, "schedule")

	// The other pages render.
	for _, page := range []string{"schedules", "workers"} {
		if err := chromedp.Run(ctx, showPage("#/"+page)); err != nil {
			t.Fatal(err)
		}
		waitText("h1", strings.ToUpper(page[:1])+page[1:])
		screenshot(t, ctx, page)
	}
	waitText("main", "ui-worker")

	// A tenant key sees its own jobs only.
	if err := chromedp.Run(ctx, showPage("#/"), chromedp.WaitVisible("#signout"), chromedp.Click("#signout"),
		chromedp.WaitVisible("#apikey"), chromedp.SendKeys("#apikey", "acme-key-0123456789"), chromedp.Click("#signin")); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Lanes")
	if err := chromedp.Run(ctx, showPage("#/job/"+theirs.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Cannot show this page")
	waitText("main", "no job")
	screenshot(t, ctx, "denied")

	// Dark theme, phone-sized.
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(390, 844), showPage("#/jobs"),
		chromedp.Click("#theme")); err != nil {
		t.Fatal(err)
	}
	waitText("main", "Jobs")
	screenshot(t, ctx, "jobs-phone-dark")
}
