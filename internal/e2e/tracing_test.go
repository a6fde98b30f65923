package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// collector is an OTLP/HTTP traces endpoint on a loopback port that keeps
// what it receives.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// find returns the span named name of the given attempt (0: any).
func (c *collector) find(name string, attempt int64) *tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if s.Name != name {
			continue
		}
		if attempt == 0 {
			return s
		}
		for _, kv := range s.Attributes {
			if kv.Key == "fairway.attempt" && kv.Value.GetIntValue() == attempt {
				return s
			}
		}
	}
	return nil
}

// A job submitted from inside a trace runs in it: the server's spans of
// the submit, the waits, the leases and the runs are in the caller's
// trace; the command's TRACEPARENT names its attempt's run span; the
// retry's run span links to the first attempt's.
func TestTracesCoverSubmitWaitLeaseRunAndLinkTheRetry(t *testing.T) {
	col := &collector{}
	otlp := httptest.NewServer(col)
	defer otlp.Close()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // export every 50 ms, not 5 s
	cl := newCluster(t, testConfig+"tracing:\n  endpoint: "+otlp.URL+"\n")
	cl.worker("w1", "--slots", "1")

	caller, err := tracing.ParseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if err != nil {
		t.Fatal(err)
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), caller)
	r, err := cl.c.Submit(ctx, api.JobSpec{
		Type:        "traced",
		Command:     []string{"sh", "-c", `echo "tp=$TRACEPARENT"; [ "$FAIRWAY_ATTEMPT" -ge 2 ]`},
		MaxAttempts: 2, Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := cl.wait(r.Job.ID, 30*time.Second)
	if done.State != api.StateSucceeded || done.Attempt != 2 {
		t.Fatalf("job ended %s after %d attempts", done.State, done.Attempt)
	}
	stored, err := tracing.ParseTraceParent(done.TraceParent)
	if err != nil || stored.TraceID() != caller.TraceID() {
		t.Fatalf("the job's traceparent %q is not in the caller's trace %s (%v)", done.TraceParent, caller.TraceID(), err)
	}

	var logs strings.Builder
	if err := cl.c.LogsAll(context.Background(), r.Job.ID, client.LogOptions{}, func(c api.LogChunk) error {
		logs.WriteString(c.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		want := tracing.Format(stored.WithSpanID(tracing.AttemptSpanID(r.Job.ID, attempt, "run")).WithRemote(false))
		if !strings.Contains(logs.String(), "tp="+want) {
			t.Fatalf("attempt %d's command did not get TRACEPARENT=%s; output:\n%s", attempt, want, logs.String())
		}
	}

	var submit, run1, run2 *tracepb.Span
	eventually(t, 15*time.Second, "the spans of the submit and both attempts", func() bool {
		submit, run1, run2 = col.find("fairway.submit", 0), col.find("fairway.run", 1), col.find("fairway.run", 2)
		return submit != nil && run1 != nil && run2 != nil && col.find("fairway.wait", 2) != nil && col.find("fairway.lease", 2) != nil
	})
	callerTrace := caller.TraceID()
	callerSpan := caller.SpanID()
	if string(submit.TraceId) != string(callerTrace[:]) || string(submit.ParentSpanId) != string(callerSpan[:]) {
		t.Fatalf("the submit span is not the caller's child: trace %x parent %x", submit.TraceId, submit.ParentSpanId)
	}
	for _, s := range []*tracepb.Span{run1, run2, col.find("fairway.wait", 2), col.find("fairway.lease", 2)} {
		if string(s.ParentSpanId) != string(submit.SpanId) || string(s.TraceId) != string(submit.TraceId) {
			t.Fatalf("span %s is not the submit span's child", s.Name)
		}
	}
	id1 := tracing.AttemptSpanID(r.Job.ID, 1, "run")
	if string(run1.SpanId) != string(id1[:]) {
		t.Fatalf("attempt 1's run span id %x, want %s", run1.SpanId, id1)
	}
	if len(run2.Links) != 1 || string(run2.Links[0].SpanId) != string(id1[:]) {
		t.Fatalf("attempt 2's run span links %v, want attempt 1's run span %s", run2.Links, id1)
	}
	if run1.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || run2.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Fatalf("run statuses: attempt 1 %v, attempt 2 %v", run1.Status, run2.Status)
	}
}

// With tracing off the server keeps the caller's context: the command
// still runs in the caller's trace.
func TestTraceparentHeaderReachesTheCommandWithTracingOff(t *testing.T) {
	cl := newCluster(t, testConfig)
	cl.worker("w1", "--slots", "1")
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	caller, _ := tracing.ParseTraceParent(tp)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), caller)
	r, err := cl.c.Submit(ctx, api.JobSpec{Type: "traced", Command: []string{"sh", "-c", `echo "tp=$TRACEPARENT"`}})
	if err != nil {
		t.Fatal(err)
	}
	done := cl.wait(r.Job.ID, 30*time.Second)
	if done.TraceParent != tp {
		t.Fatalf("stored traceparent %q, want %q", done.TraceParent, tp)
	}
	var logs strings.Builder
	_ = cl.c.LogsAll(context.Background(), r.Job.ID, client.LogOptions{}, func(c api.LogChunk) error {
		logs.WriteString(c.Data)
		return nil
	})
	if !strings.Contains(logs.String(), "tp="+tp) {
		t.Fatalf("command output %q lacks TRACEPARENT=%s", logs.String(), tp)
	}
}
