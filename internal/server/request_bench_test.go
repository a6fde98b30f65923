package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkSubmitHandler measures one POST /api/v1/jobs through the
// server's handler chain (no network): the request path's own CPU and
// allocations per submit, the dispatcher's and the store's included. Each
// spec carries its own idempotency key, as the Go client's do.
func BenchmarkSubmitHandler(b *testing.B) {
	h := newHarness(b, defaultConfig())
	h.clock = nil
	h.srv.clock = realClock{}
	handler := h.srv.Handler()
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = []byte(`{"type":"noop","payload":{"s":` + strconv.Itoa(i) + `,"t":1764150000000000000},"idempotency_key":"fwc-bench-` + strconv.Itoa(i) + `"}`)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/jobs", bytes.NewReader(bodies[i]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "fwc-bench-"+strconv.Itoa(i))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("submit: HTTP %d: %s", rec.Code, rec.Body)
		}
	}
}
