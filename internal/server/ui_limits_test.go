package server

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fairwayhq/fairway/api"
)

// The overview lists the rate limits with their buckets and each tenant's
// quota use; a job's page shows explain's rate limit and quota blocks.
func TestUIShowsRateLimitsAndQuotas(t *testing.T) {
	ctx := browser(t)
	cfg := limitsConfig(2)
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	h := newHarness(t, cfg)
	h.key = "admin-key-0123456789"
	w := h.register(api.RegisterRequest{Name: "w", Slots: 8, GPU: 8})
	h.submit(api.JobSpec{Type: "call-stripe", Tenant: "shop"})
	limited := h.submit(api.JobSpec{Type: "call-stripe", Tenant: "shop"})
	h.submit(api.JobSpec{Type: "train", Tenant: "acme"})
	overQuota := h.submit(api.JobSpec{Type: "train", Tenant: "acme"})
	if n := len(h.lease(w, 8)); n != 2 {
		t.Fatalf("leased %d, want 2", n)
	}

	waitText := func(sel, want string) { t.Helper(); waitForText(t, ctx, sel, want) }
	if err := chromedp.Run(ctx, chromedp.Navigate(h.http.URL+"/"), chromedp.WaitVisible("#apikey"),
		chromedp.SendKeys("#apikey", "admin-key-0123456789"), chromedp.Click("#signin")); err != nil {
		t.Fatal(err)
	}
	waitText("#rate-limits", "stripe")
	waitText("#rate-limits", "1 per 1m0s, burst 1")
	waitText("#rate-limits", "0.00")
	waitText("#tenants", "gpu 2 of 2")
	screenshot(t, ctx, "rate-limits")

	if err := chromedp.Run(ctx, showPage("#/job/"+limited.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("#explain", "rate_limited")
	waitText("#explain", "stripe: 1 per 1m0s, burst 1; next token at")
	if err := chromedp.Run(ctx, showPage("#/job/"+overQuota.ID)); err != nil {
		t.Fatal(err)
	}
	waitText("#explain", "tenant_quota")
	waitText("#explain", "tenant acme: gpu 2 of 2 in use, the job needs 2")
}
