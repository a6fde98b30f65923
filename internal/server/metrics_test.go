package server

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// scrape reads /metrics as Prometheus would and returns every sample as
// "name{label="value",...}" → value, histograms as _count and _sum.
func (h *harness) scrape() map[string]float64 {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.http.URL+"/metrics", nil)
	if h.key != "" {
		req.Header.Set("Authorization", "Bearer "+h.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]float64{}
	for name, f := range families {
		if !strings.HasPrefix(name, "fairway_") {
			continue
		}
		for _, m := range f.Metric {
			key := name + labelText(m.Label)
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[name+"_count"+labelText(m.Label)] = float64(m.Histogram.GetSampleCount())
				out[name+"_sum"+labelText(m.Label)] = m.Histogram.GetSampleSum()
			}
		}
	}
	return out
}

func labelText(ls []*dto.LabelPair) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

// After a known workload the metrics count exactly what happened: jobs
// submitted, started (with their waits), ended (with their run times) and
// finished by state and class, the gauges of what is left, and the HTTP
// requests by route and code.
func TestMetricsCountAKnownWorkloadExactly(t *testing.T) {
	h := newHarness(t, defaultConfig())
	for range 5 {
		h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	}
	b := h.submit(api.JobSpec{Type: "b"})
	if code := h.do("POST", "/jobs/"+b.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	w := h.register(api.RegisterRequest{Name: "w", Slots: 3, Types: []string{"a"}})
	h.clock.Advance(2 * time.Second)
	ls := h.lease(w, 3)
	if len(ls) != 3 {
		t.Fatalf("leases: %d", len(ls))
	}
	start := h.clock.Now()
	for _, l := range ls {
		h.start(w, l.Job.ID, 1)
	}
	h.clock.Advance(5 * time.Second)
	for i, l := range ls {
		c := api.Completion{JobID: l.Job.ID, Attempt: 1, Outcome: "succeeded", ExitCode: intp(0)}
		if i == 2 {
			c = api.Completion{JobID: l.Job.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(3), FailureClass: "exit_code"}
		}
		st, fin := start, start.Add(time.Duration(i+1)*time.Second)
		c.StartedAt, c.FinishedAt = &st, &fin
		h.complete(w, c)
	}
	got := h.scrape()
	dl := "lane=default,"
	want := map[string]float64{
		"fairway_jobs_submitted_total{" + dl + "type=a}":                                        5,
		"fairway_jobs_submitted_total{" + dl + "type=b}":                                        1,
		"fairway_jobs_finished_total{failure_class=," + dl + "state=succeeded,type=a}":          2,
		"fairway_jobs_finished_total{failure_class=exit_code," + dl + "state=failed,type=a}":    1,
		"fairway_jobs_finished_total{failure_class=," + dl + "state=cancelled,type=b}":          1,
		"fairway_attempts_ended_total{failure_class=," + dl + "outcome=succeeded,type=a}":       2,
		"fairway_attempts_ended_total{failure_class=exit_code," + dl + "outcome=failed,type=a}": 1,
		"fairway_job_wait_seconds_count{" + dl + "type=a}":                                      3,
		"fairway_job_wait_seconds_sum{" + dl + "type=a}":                                        6, // 2 s each
		"fairway_job_run_seconds_count{" + dl + "type=a}":                                       3,
		"fairway_job_run_seconds_sum{" + dl + "type=a}":                                         6, // 1 + 2 + 3 s
		"fairway_jobs_pending{" + dl + "tenant=default}":                                        0,
		"fairway_jobs_running{" + dl + "tenant=default}":                                        2, // the last two took the freed slots
		"fairway_workers{state=active}":                                                         1,
		"fairway_workers{state=draining}":                                                       0,
		"fairway_lease_expirations_total{}":                                                     0,
		"fairway_http_requests_total{code=201,route=POST /api/v1/jobs}":                         6,
		"fairway_http_requests_total{code=200,route=POST /api/v1/jobs/{id}/cancel}":             1,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if got["fairway_store_commit_seconds_count{}"] == 0 || got["fairway_dispatch_seconds_count{}"] == 0 {
		t.Errorf("no commit or dispatch timings: %v %v", got["fairway_store_commit_seconds_count{}"], got["fairway_dispatch_seconds_count{}"])
	}
}

// /metrics is for admin keys (and open mode); a tenant key gets 403.
func TestMetricsNeedAnAdminKey(t *testing.T) {
	cfg := defaultConfig()
	cfg.AdminKeys = []string{"admin-key-0123456789"}
	cfg.Tenants = map[string]config.Tenant{"acme": {APIKeys: []string{"acme-key-0123456789"}}}
	h := newHarness(t, cfg)
	for key, want := range map[string]int{"": http.StatusUnauthorized, "acme-key-0123456789": http.StatusForbidden, "admin-key-0123456789": http.StatusOK} {
		req, _ := http.NewRequest("GET", h.http.URL+"/metrics", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("key %q: HTTP %d, want %d", key, resp.StatusCode, want)
		}
	}
}

// Every metric docs/metrics.md and the sample Grafana dashboard name is
// one the server exports, and every exported one is documented.
func TestMetricsDocsNameWhatIsExported(t *testing.T) {
	h := newHarness(t, defaultConfig())
	// A labelled family is exported once it has a sample: run one job,
	// leave one pending.
	h.submit(api.JobSpec{Type: "a"})
	h.submit(api.JobSpec{Type: "a"})
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	ls := h.lease(w, 1)
	h.start(w, ls[0].Job.ID, 1)
	h.complete(w, api.Completion{JobID: ls[0].Job.ID, Attempt: 1, Outcome: "succeeded"})
	exported := map[string]bool{}
	for key := range h.scrape() {
		name := key[:strings.IndexByte(key, '{')]
		name = strings.TrimSuffix(strings.TrimSuffix(name, "_count"), "_sum")
		exported[name] = true
	}
	named := regexp.MustCompile(`fairway_[a-z_]+`)
	for _, doc := range []string{"metrics.md", "grafana-dashboard.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range named.FindAllString(string(raw), -1) {
			base := strings.TrimSuffix(name, "_bucket")
			if !exported[base] && !strings.HasSuffix(name, "_") {
				t.Errorf("%s names %s, which is not exported", doc, name)
			}
		}
		if doc == "metrics.md" {
			for name := range exported {
				if !strings.Contains(string(raw), "`"+name+"`") {
					t.Errorf("%s is exported but not documented in docs/metrics.md", name)
				}
			}
		}
	}
}
