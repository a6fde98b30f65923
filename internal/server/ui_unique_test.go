package server

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fairwayhq/fairway/api"

	"github.com/fairwayhq/fairway/internal/store"
)

// The job page shows a job's unique rule, and its snoozes.
func TestUIShowsTheUniqueRuleAndSnoozes(t *testing.T) {
	ctx := browser(t)
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	h := newHarness(t, cfg)
	// Close the browser before the server (cleanups run last first): the
	// page's log stream would hold the server's Close.
	t.Cleanup(func() { _ = chromedp.Cancel(ctx) })
	h.key = "admin-key-0123456789"
	spec := uniqueSpec("repo-1", "pending", "running")
	spec.Unique.PeriodMS = store.Ptr(int64(10 * 60 * 1000))
	job := h.submit(spec)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	if r := h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: api.OutcomeSnoozed, SnoozeMS: 60000}); !r.OK {
		t.Fatalf("snooze: %+v", r)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(h.http.URL+"/"), chromedp.WaitVisible("#apikey"),
		chromedp.SendKeys("#apikey", "admin-key-0123456789"), chromedp.Click("#signin"),
		chromedp.WaitVisible("main"), showPage("#/job/"+job.ID)); err != nil {
		t.Fatal(err)
	}
	waitFor := func(sel, want string) { t.Helper(); waitForText(t, ctx, sel, want) }
	waitFor("#unique", "by key, type; while pending or running; period 10m")
	waitFor("#snoozes", "1 of 100 (not charged)")
}
