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

// BenchmarkSubmitClient measures the client's side of one Submit (the
// request built, the answer decoded) against a transport that answers at
// once: its CPU and allocations per submit, no network.
func BenchmarkSubmitClient(b *testing.B) {
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, _ = io.Copy(io.Discard, r.Body)
		return &http.Response{StatusCode: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(submitAnswer)), Request: r}, nil
	})}
	c, err := New("http://h", WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
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
