package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// codecJob is a job with what a codec may get wrong.
func codecJob() api.Job {
	now := time.Date(2026, 11, 26, 13, 0, 0, 123456789, time.UTC)
	code := 3
	return api.Job{
		ID: "01J<b>&", Type: "t\u2028x\u2029y", Tenant: "t", Lane: "default", Priority: 500,
		Resources: api.Resources{CPU: 0.1, MemoryMB: 64}, Labels: []string{"gpu"}, Command: []string{"sh", "-c", "echo '<hi>'"},
		Env:     map[string]string{"z": "1", "a": "<&>", "m": "\x01\x1f\"\\/\u00e9"},
		Payload: json.RawMessage(`{"a":1,"b":[1,2.5e3],"c":"x y\" z","d":null}`), Result: json.RawMessage(`[5]`),
		MaxAttempts: 3, Retry: api.RetryPolicy{Kind: "exponential", DelayMS: 1000, Jitter: true, RetryOn: []string{"oom"}},
		State: api.StateRunning, Attempt: 1, CreatedAt: now, UpdatedAt: now.In(time.FixedZone("x", 3600)),
		StartedAt: &now, ExitCode: &code, DependsOn: []api.Dependency{{JobID: "a"}}, Unique: &api.UniqueRule{By: []string{"type"}},
	}
}

// TestCodecDecodesAsEncodingJSON pins the client's decoder: the same
// values as encoding/json from the server's answers.
func TestCodecDecodesAsEncodingJSON(t *testing.T) {
	now := time.Date(2026, 11, 26, 13, 0, 30, 0, time.UTC)
	answers := []any{
		&api.ItemResults{Results: []api.ItemResult{{JobID: "a", OK: true}, {JobID: "b", Error: &api.ErrorBody{Code: "stale", Message: "<old>"}}},
			Leases: []api.Lease{{Job: codecJob(), Attempt: 1, LeaseExpiresAt: now, TraceParent: "00-x"}}},
		&api.LeaseResponse{Leases: []api.Lease{}},
		&api.BatchResponse{Jobs: []api.SubmitResponse{{Job: codecJob(), Warnings: []string{"w"}}}},
		&api.HeartbeatResponse{LeaseExpiresAt: now, Revoked: []api.JobAttempt{{JobID: "a", Attempt: 2, StartedAt: &now}}},
	}
	for _, a := range answers {
		doc, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		want, got := reflect.New(reflect.TypeOf(a).Elem()), reflect.New(reflect.TypeOf(a).Elem())
		if err := json.Unmarshal(doc, want.Interface()); err != nil {
			t.Fatal(err)
		}
		if err := decodeBody(bytes.NewReader(doc), got.Interface()); err != nil {
			t.Fatalf("decodeBody(%s): %v", doc, err)
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("decodeBody(%s) =\n%#v\nencoding/json decodes\n%#v", doc, got.Elem().Interface(), want.Elem().Interface())
		}
	}
}

// TestCodecEncodesAsEncodingJSON pins the requests' bodies: byte for byte
// what encoding/json writes.
func TestCodecEncodesAsEncodingJSON(t *testing.T) {
	now := time.Date(2026, 11, 26, 13, 0, 30, 5, time.UTC)
	code := 1
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []any{
		api.CompleteRequest{Results: []api.Completion{{JobID: "a<b>", Attempt: 1, Outcome: api.OutcomeFailed, ExitCode: &code,
			Error: "bad \u2028 <x> \xff", StartedAt: &now, FinishedAt: &now, Result: json.RawMessage(`{"a": "<b>" }`)}}, LeaseMax: 10},
		api.BatchRequest{Jobs: []api.JobSpec{{Type: "t", Env: map[string]string{"b": "1", "a": "2"}, Payload: json.RawMessage(" [1, 2] ")}}},
		api.HeartbeatRequest{Jobs: []api.JobAttempt{{JobID: "a", Attempt: 1}}, WaitMS: 5},
	} {
		want, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.newRequest(t.Context(), "POST", "http://127.0.0.1:1/x", nil, in)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := got.ReadFrom(req.Body); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("request body\n%s\nencoding/json writes\n%s", got.String(), want)
		}
	}
}
