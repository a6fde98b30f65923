package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/alerts"
	"github.com/fairwayhq/fairway/internal/config"
)

const hookSecret = "0123456789abcdef-hook-secret"

// receiver is a webhook endpoint on loopback: it answers with the codes
// given, in turn (200 once they run out), and remembers each delivery.
type receiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	codes []int
	got   []received
	hang  chan struct{} // when set, every request waits for it to close
}

type received struct {
	at    time.Time
	alert alerts.Alert
	valid bool // the signature verifies
}

func newReceiver(t *testing.T, codes ...int) *receiver {
	r := &receiver{codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.hang != nil {
			select {
			case <-r.hang:
			case <-req.Context().Done():
			}
			return
		}
		body, _ := io.ReadAll(req.Body)
		// Verify as a receiver would, by hand: HMAC-SHA256 of "t.body".
		sig := req.Header.Get(alerts.SignatureHeader)
		unix, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(hookSecret))
		mac.Write([]byte(unix + "."))
		mac.Write(body)
		fresh := time.Since(time.Unix(atoi(unix), 0)).Abs() < time.Minute
		var al alerts.Alert
		_ = json.Unmarshal(body, &al)
		r.mu.Lock()
		r.got = append(r.got, received{at: time.Now(), alert: al, valid: fresh && hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil))))})
		code := http.StatusOK
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		r.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(func() {
		if r.hang != nil {
			close(r.hang)
		}
		r.srv.Close()
	})
	return r
}

func atoi(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func alertConfig(url string) config.Config {
	cfg := defaultConfig()
	cfg.Alerts = config.Alerts{
		Webhooks:  []config.Webhook{{Name: "ops", URL: url, Secret: hookSecret}},
		RetryBase: config.Duration(20 * time.Millisecond), MaxTries: 4, Timeout: config.Duration(300 * time.Millisecond),
	}
	return cfg
}

// waitEvents polls the audit trail for events of types until want of them
// are there (5 s at most).
func (h *harness) waitEvents(types string, want int) []api.Event {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out api.EventList
		h.do("GET", "/events?type="+types, nil, &out)
		if len(out.Events) >= want || time.Now().After(deadline) {
			return out.Events
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A job that fails after its last attempt raises job_failed: the webhook
// gets it signed, after two 500s retried with a doubling back-off, and the
// audit trail records the delivery.
func TestAlertWebhookIsSignedAndRetried(t *testing.T) {
	recv := newReceiver(t, 500, 500)
	h := newHarness(t, alertConfig(recv.srv.URL))
	job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.lease(w, 1)
	h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(2), FailureClass: "exit_code"})

	evs := h.waitEvents("alert_delivered,alert_failed", 1)
	if len(evs) != 1 || evs[0].Type != "alert_delivered" || evs[0].JobID != job.ID {
		t.Fatalf("outcome events: %+v", evs)
	}
	var detail struct {
		Webhook, Kind string
		Tries         int
	}
	_ = json.Unmarshal(evs[0].Detail, &detail)
	if detail.Webhook != "ops" || detail.Kind != "job_failed" || detail.Tries != 3 {
		t.Errorf("outcome detail %s", evs[0].Detail)
	}
	got := recv.deliveries()
	if len(got) != 3 {
		t.Fatalf("%d deliveries, want 3 (two 500s, then 200)", len(got))
	}
	for i, d := range got {
		if !d.valid || d.alert.Kind != "job_failed" || d.alert.JobID != job.ID || d.alert.Try != i+1 || d.alert.Event == nil {
			t.Errorf("delivery %d: %+v (signature valid %v)", i+1, d.alert, d.valid)
		}
	}
	if gap1, gap2 := got[1].at.Sub(got[0].at), got[2].at.Sub(got[1].at); gap1 < 20*time.Millisecond || gap2 < 40*time.Millisecond {
		t.Errorf("back-off %s then %s, want at least 20ms then 40ms", gap1, gap2)
	}
}

// A webhook that answers nothing does not hold up the dispatcher: jobs
// keep flowing while its deliveries time out, and each one ends recorded
// as failed after its last try.
func TestAHungWebhookDoesNotStallTheDispatcher(t *testing.T) {
	recv := newReceiver(t)
	recv.hang = make(chan struct{})
	cfg := alertConfig(recv.srv.URL)
	cfg.Alerts.MaxTries = 2
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	began := time.Now()
	for range 20 { // 20 failed jobs: 20 alerts whose deliveries hang
		job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
		h.lease(w, 1)
		h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "failed", FailureClass: "exit_code"})
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("20 jobs took %s while the webhook hung", took)
	}
	evs := h.waitEvents("alert_failed", 20)
	if len(evs) != 20 {
		t.Fatalf("%d alert_failed events, want 20", len(evs))
	}
}

// A submit refused by the tenant's quota raises tenant_over_quota, once a
// minute at most.
func TestTenantOverQuotaAlert(t *testing.T) {
	recv := newReceiver(t)
	cfg := alertConfig(recv.srv.URL)
	cfg.Tenants = map[string]config.Tenant{"acme": {MaxQueued: 1}}
	h := newHarness(t, cfg)
	h.submit(api.JobSpec{Type: "a", Tenant: "acme"})
	for range 3 {
		if code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Tenant: "acme"}, nil); code != http.StatusServiceUnavailable {
			t.Fatalf("a submit over the quota: HTTP %d", code)
		}
	}
	h.waitEvents("alert_delivered", 1)
	time.Sleep(50 * time.Millisecond) // a second alert, if one were raised, would be delivered by now
	got := recv.deliveries()
	if len(got) != 1 || got[0].alert.Kind != "tenant_over_quota" || got[0].alert.Tenant != "acme" || !got[0].valid {
		t.Fatalf("deliveries %+v, want one tenant_over_quota for acme", got)
	}
}

// A webhook registered through the admin API hears alerts at once; the
// list never shows a secret; once deleted it hears nothing more.
func TestWebhooksRegisteredThroughTheAPI(t *testing.T) {
	recv := newReceiver(t)
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{"acme": {APIKeys: []string{"acme-key-0123456789"}}}
	cfg.Alerts = config.Alerts{Webhooks: []config.Webhook{{Name: "from-file", URL: "http://127.0.0.1:9/none", Secret: hookSecret,
		Kinds: []string{"sla_warning"}}}, RetryBase: config.Duration(20 * time.Millisecond)}
	h := newHarness(t, cfg)
	h.key = "acme-key-0123456789"
	var e api.ErrorResponse
	if code := h.do("GET", "/webhooks", nil, &e); code != http.StatusForbidden {
		t.Errorf("a tenant listing webhooks: HTTP %d, want 403", code)
	}
	h.key = "admin-key-0123456789"
	req := api.WebhookRequest{Name: "ops", URL: recv.srv.URL, Secret: hookSecret, Kinds: []string{"job_failed"}}
	if code := h.do("POST", "/webhooks", req, nil); code != http.StatusCreated {
		t.Fatalf("register: HTTP %d", code)
	}
	for _, bad := range []api.WebhookRequest{{Name: "ops", URL: recv.srv.URL, Secret: hookSecret}, {Name: "from-file", URL: recv.srv.URL, Secret: hookSecret}} {
		if code := h.do("POST", "/webhooks", bad, &e); code != http.StatusConflict {
			t.Errorf("register %s again: HTTP %d, want 409", bad.Name, code)
		}
	}
	for _, bad := range []api.WebhookRequest{{URL: recv.srv.URL, Secret: hookSecret}, {Name: "x", URL: "ftp://h", Secret: hookSecret},
		{Name: "x", URL: recv.srv.URL, Secret: "short"}, {Name: "x", URL: recv.srv.URL, Secret: hookSecret, Kinds: []string{"rain"}}} {
		if code := h.do("POST", "/webhooks", bad, &e); code != http.StatusBadRequest || e.Error.Field == "" {
			t.Errorf("register %+v: HTTP %d %+v, want 400 naming the field", bad, code, e.Error)
		}
	}
	var list api.WebhookList
	h.do("GET", "/webhooks", nil, &list)
	if len(list.Webhooks) != 2 || list.Webhooks[0].Source != "config" || list.Webhooks[1].Source != "api" || !strings.HasPrefix(list.Webhooks[1].CreatedBy, "admin key ") {
		t.Errorf("list: %+v", list)
	}
	if raw, _ := json.Marshal(list); strings.Contains(string(raw), hookSecret) {
		t.Error("the webhook list shows a secret")
	}

	fail := func() {
		job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
		w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
		h.lease(w, 1)
		h.complete(w, api.Completion{JobID: job.ID, Attempt: 1, Outcome: "failed", FailureClass: "exit_code"})
	}
	fail()
	h.waitEvents("alert_delivered", 1)
	if got := recv.deliveries(); len(got) != 1 || got[0].alert.Webhook != "ops" || !got[0].valid {
		t.Fatalf("deliveries %+v", got)
	}
	if code := h.do("DELETE", "/webhooks/from-file", nil, &e); code != http.StatusConflict {
		t.Errorf("delete a configured webhook: HTTP %d, want 409", code)
	}
	if code := h.do("DELETE", "/webhooks/ops", nil, nil); code != http.StatusOK {
		t.Fatalf("delete: HTTP %d", code)
	}
	if code := h.do("DELETE", "/webhooks/ops", nil, &e); code != http.StatusNotFound {
		t.Errorf("delete twice: HTTP %d, want 404", code)
	}
	fail()
	if evs := h.waitEvents("webhook_created,webhook_deleted", 2); len(evs) != 2 {
		t.Errorf("webhook events: %+v", evs)
	}
	if got := recv.deliveries(); len(got) != 1 {
		t.Errorf("a deleted webhook got %d deliveries", len(got)-1)
	}
}
