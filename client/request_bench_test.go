package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// submitAnswer is a server's answer to POST /jobs, as fairway server
// writes it for the bench's jobs.
const submitAnswer = `{"job":{"id":"01KB0Z6T0X4P3W6D4N1Q2R3S4T","type":"bench","tenant":"default","lane":"default","priority":500,"resources":{"slots":1},"payload":{"s":1,"t":1764150000000000000},"idempotency_key":"fwc-0123456789abcdef0123456789abcdef","max_attempts":3,"retry":{"initial_ms":1000,"max_ms":60000,"multiplier":2},"state":"pending","attempt":0,"created_at":"2026-11-26T18:00:00.123456Z","updated_at":"2026-11-26T18:00:00.123456Z","enqueued_at":"2026-11-26T18:00:00.123456Z"},"estimated_start":"2026-11-26T18:00:00.123456Z","deduplicated":false}` + "\n"

// answeringClient is a Client whose transport reads each request and
// answers it at once with status and body: the client's own work, no
// network.
func answeringClient(b *testing.B, status int, body string) *Client {
	b.Helper()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
	c, err := New("http://h", WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSubmitClient measures the client's side of one Submit (the
// request built, the answer decoded) against a transport that answers at
// once: its CPU and allocations per submit, no network.
func BenchmarkSubmitClient(b *testing.B) {
	c := answeringClient(b, http.StatusCreated, submitAnswer)
	ctx := context.Background()
	spec := api.JobSpec{Type: "bench", Payload: []byte(`{"s":1,"t":1764150000000000000}`)}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Submit(ctx, spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompleteAndLeaseClient measures the client's side of one
// CompleteAndLease reporting 20 results and taking 20 new leases, against
// a transport that answers at once: its allocations per call, no network.
func BenchmarkCompleteAndLeaseClient(b *testing.B) {
	const n = 20
	job := submitAnswer[len(`{"job":`):strings.Index(submitAnswer, `,"estimated_start"`)]
	var answer strings.Builder
	answer.WriteString(`{"results":[`)
	for i := range n {
		if i > 0 {
			answer.WriteString(",")
		}
		answer.WriteString(`{"job_id":"01KB0Z6T0X4P3W6D4N1Q2R3S4T","ok":true}`)
	}
	answer.WriteString(`],"leases":[`)
	for i := range n {
		if i > 0 {
			answer.WriteString(",")
		}
		answer.WriteString(`{"job":` + job + `,"attempt":1,"lease_expires_at":"2026-11-26T18:00:30.123456Z"}`)
	}
	answer.WriteString("]}\n")
	body := answer.String()
	c := answeringClient(b, http.StatusOK, body)
	ctx := context.Background()
	results := make([]api.Completion, n)
	for i := range results {
		results[i] = api.Completion{JobID: "01KB0Z6T0X4P3W6D4N1Q2R3S4T", Attempt: 1, Outcome: api.OutcomeSucceeded}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, leases, err := c.CompleteAndLease(ctx, "w1", results, n)
		if err != nil || len(res) != n || len(leases) != n {
			b.Fatalf("%d results, %d leases, %v", len(res), len(leases), err)
		}
	}
}

// BenchmarkSubmitBatchClient measures the client's side of one
// SubmitBatch of 100 specs against a transport that answers at once: its
// allocations per call, no network.
func BenchmarkSubmitBatchClient(b *testing.B) {
	const n = 100
	one := strings.TrimSuffix(submitAnswer, "\n")
	body := `{"jobs":[` + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + "]}\n"
	c := answeringClient(b, http.StatusCreated, body)
	ctx := context.Background()
	specs := make([]api.JobSpec, n)
	for i := range specs {
		specs[i] = api.JobSpec{Type: "bench", Payload: []byte(`{"s":1,"t":1764150000000000000}`)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out, err := c.SubmitBatch(ctx, specs)
		if err != nil || len(out.Jobs) != n {
			b.Fatalf("%d jobs, %v", len(out.Jobs), err)
		}
	}
}
