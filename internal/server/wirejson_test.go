package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
)

// wireJob is a job with what an encoder may get wrong: raw documents with
// white space, HTML characters, U+2028, control characters, invalid
// UTF-8, a map, times in and out of UTC, floats.
func wireJob() api.Job {
	now := time.Date(2026, 11, 26, 13, 0, 0, 123456789, time.UTC)
	code := 3
	return api.Job{
		ID: "01J<b>&", Type: "t\u2028x\u2029y", Tenant: "bad\xffutf8", Lane: "default", Priority: 500,
		Resources: api.Resources{CPU: 0.1, MemoryMB: 64}, Labels: []string{"gpu"}, Command: []string{"sh", "-c", "echo '<hi>'"},
		Env:     map[string]string{"z": "1", "a": "<&>", "m": "\x01\x1f\"\\/"},
		Payload: json.RawMessage(`{"a": 1, "b" : [1, 2] ,"c":"x y\" z"}`), Result: json.RawMessage("\n[ 5 ]\t"),
		MaxAttempts: 3, Retry: api.RetryPolicy{Kind: "exponential", DelayMS: 1000, Jitter: true},
		State: api.StateRunning, Attempt: 1, CreatedAt: now, UpdatedAt: now.In(time.FixedZone("x", 3600)),
		StartedAt: &now, ExitCode: &code, DependsOn: []api.Dependency{{JobID: "a"}},
	}
}

// TestWireJSONSameBytes pins the hot answers' encoder: byte for byte what
// writeJSON (encoding/json) writes for the same answers.
func TestWireJSONSameBytes(t *testing.T) {
	now := time.Date(2026, 11, 26, 13, 0, 30, 0, time.UTC)
	lease := func() api.Lease {
		return api.Lease{Job: wireJob(), Attempt: 1, LeaseExpiresAt: now, TraceParent: "00-x"}
	}
	// Each case builds its answer as its handler does; with compact false,
	// as handlers did before writeWireJSON (the raw documents as stored).
	cases := map[string]func(compact bool) any{
		"lease": func(compact bool) any {
			ls := []api.Lease{lease(), lease()}
			if compact {
				compactLeases(ls)
			}
			return api.LeaseResponse{Leases: ls}
		},
		"no leases": func(bool) any { return api.LeaseResponse{Leases: []api.Lease{}} },
		"complete": func(compact bool) any {
			ls := []api.Lease{lease()}
			if compact {
				compactLeases(ls)
			}
			return api.ItemResults{Results: []api.ItemResult{{JobID: "a", OK: true}, {JobID: "b", Error: &api.ErrorBody{Code: "stale", Message: "<old>"}}}, Leases: ls}
		},
		"batch": func(compact bool) any {
			out := api.BatchResponse{Jobs: []api.SubmitResponse{{Job: wireJob(), Warnings: []string{"no worker"}}, {Job: wireJob(), Deduplicated: true}}}
			for i := range out.Jobs {
				if compact {
					compactJob(&out.Jobs[i].Job)
				}
			}
			return out
		},
		"heartbeat": func(bool) any {
			return api.HeartbeatResponse{LeaseExpiresAt: now, Cancel: []api.JobAttempt{{JobID: "a", Attempt: 2, StartedAt: &now}}}
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := httptest.NewRecorder(), httptest.NewRecorder()
			writeJSON(want, http.StatusOK, f(false))
			writeWireJSON(got, http.StatusOK, f(true))
			if got.Body.String() != want.Body.String() {
				t.Fatalf("writeWireJSON wrote\n%s\nencoding/json writes\n%s", got.Body, want.Body)
			}
			for _, h := range []string{"Content-Type", "Content-Length"} {
				if got.Header().Get(h) != want.Header().Get(h) {
					t.Errorf("%s: %q, want %q", h, got.Header().Get(h), want.Header().Get(h))
				}
			}
		})
	}
}

func TestIsCompact(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"a":1}`: true, `{"a":"x y"}`: true, `{"a":"x\" y"}`: true, `{"a":"x\\"}`: true,
		`{"a": 1}`: false, `{"a":"x\\" ,"b":1}`: false, "[1,\n2]": false, ` 1`: false,
	} {
		if got := isCompact([]byte(doc)); got != want {
			t.Errorf("isCompact(%s) = %v, want %v", doc, got, want)
		}
	}
}

// decodeBodies are request bodies, good and bad, for the decoders.
var decodeBodies = []string{
	`{"results":[{"job_id":"a","attempt":1,"outcome":"succeeded","started_at":"2026-11-26T13:00:00.5+01:00","finished_at":"2026-11-26T13:00:01Z","result":{"a": [1, 2]}}],"lease_max":10}`,
	`{"Results":[{"JOB_ID":"a","attempt":1,"outcome":"failed","exit_code":2,"error":"x\u2028\ud800y","usage":{"cpu_user_us":5,"source":"rusage"}}]}`,
	`{"results":[{"job_id":"a","attempt":1,"outcome":"succeeded","started_at":"2026-11-26T13:00:00,5Z"}]}`,
	`{"results":[{"job_id":"a","attempt":1.0}]}`, `{"results":[{"job_id":"a","attempt":"1"}]}`, `{"results":null}`, `{"results":[]}`,
	`{"results":[{"job_id":"a","bogus":1}]}`, `{"lease_max":1e1}`, `{"lease_max":99999999999999999999}`, `{"lease_max":1,"lease_max":2}`,
	`{"results":[]}{}`, `{"results":[]} x`, "{\"results\":[]}\n\t ", `{"results":[],}`, ``, ` `, `null`, `[]`, `"x"`, `{`, `{"results":[{"job_id":"a\x"}]}`,
	`{"jobs":[{"type":"t","env":{"b":"1","a":"2"},"payload":{"x": "y z"},"run_at":"2026-11-26T13:00:00Z","priority":5,"preemptible":false,"resources":{"cpu":0.5}}]}`,
	`{"jobs":[{"type":"t","unique":{"by":["type"],"period_ms":1000}}]}`, `{"jobs":[{"type":"t","run_at":"2026-11-26t13:00:00z"}]}`,
	`{"jobs":[{"type":"t","run_at":"2026-11-26T24:00:00Z"}]}`, `{"jobs":[{"type":"t","payload":}]}`, `{"jobs":[{"type":"t","command":"ls"}]}`,
	`{"max":5,"wait_ms":100}`, `{"max":-1}`, `{"max":true}`, `{"jobs":[{"job_id":"a","attempt":1,"started_at":null}],"wait_ms":5}`,
}

// TestDecodeFastAsEncodingJSON pins decodeBytes to encoding/json: the
// same value, or the same error, for every body.
func TestDecodeFastAsEncodingJSON(t *testing.T) {
	types := []func() any{
		func() any { return &api.CompleteRequest{} }, func() any { return &api.BatchRequest{} },
		func() any { return &api.LeaseRequest{Max: 7} }, func() any { return &api.HeartbeatRequest{} },
	}
	for _, body := range decodeBodies {
		for _, mk := range types {
			want, got := mk(), mk()
			werr, gerr := decodeStd([]byte(body), want), decodeBytes([]byte(body), got)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("%T %s: error %v, encoding/json's %v", got, body, gerr, werr)
				continue
			}
			if werr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%T %s: decoded\n%#v\nencoding/json decodes\n%#v", got, body, got, want)
			}
		}
	}
}

// FuzzDecodeFast checks decodeBytes against encoding/json on any body.
func FuzzDecodeFast(f *testing.F) {
	for _, b := range decodeBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return // refused before either decoder
		}
		for _, mk := range []func() any{func() any { return &api.CompleteRequest{} }, func() any { return &api.BatchRequest{} }} {
			want, got := mk(), mk()
			werr, gerr := decodeStd(body, want), decodeBytes(body, got)
			if (werr == nil) != (gerr == nil) || (werr == nil && !reflect.DeepEqual(got, want)) {
				t.Fatalf("%T %q: %v %#v, encoding/json: %v %#v", got, body, gerr, got, werr, want)
			}
		}
	})
}
