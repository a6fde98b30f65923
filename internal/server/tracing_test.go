package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// With tracing off, a submit's valid traceparent header is stored with the
// job, an invalid one is ignored (W3C Trace Context: restart the trace),
// and the spec's own field wins over the header.
func TestSubmitKeepsTheCallersTraceContext(t *testing.T) {
	h := newHarness(t, defaultConfig())
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const field = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	cases := []struct{ name, header, body, want string }{
		{"valid header", valid, `{"type":"a"}`, valid},
		{"invalid header ignored", "00-nonsense", `{"type":"a"}`, ""},
		{"field wins", valid, `{"type":"a","traceparent":"` + field + `"}`, field},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", h.http.URL+"/api/v1/jobs", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("traceparent", c.header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out api.SubmitResponse
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
				t.Fatalf("status %d: %v", resp.StatusCode, err)
			}
			if out.Job.TraceParent != c.want {
				t.Fatalf("stored traceparent %q, want %q", out.Job.TraceParent, c.want)
			}
		})
	}
}
