package tracing

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fairwayhq/fairway/internal/config"
)

const callerTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func newTestTracer(t *testing.T) (*Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tr := NewWithExporter(exp, "test")
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

func byName(spans tracetest.SpanStubs) map[string]tracetest.SpanStub {
	out := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		out[s.Name] = s
	}
	return out
}

func TestSubmitSpanIsTheCallersChildAndItsContextIsStored(t *testing.T) {
	tr, exp := newTestTracer(t)
	stored, end := tr.Submit(context.Background(), callerTP, "acme", 1)
	end("job-1", nil)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "fairway.submit" {
		t.Fatalf("spans: %+v", spans)
	}
	s := spans[0]
	caller, _ := ParseTraceParent(callerTP)
	if s.Parent.SpanID() != caller.SpanID() || s.SpanContext.TraceID() != caller.TraceID() {
		t.Fatalf("submit span's parent %s/%s, want the caller's %s/%s", s.Parent.TraceID(), s.Parent.SpanID(), caller.TraceID(), caller.SpanID())
	}
	if want := Format(s.SpanContext); stored != want {
		t.Fatalf("stored traceparent %q, want the submit span's %q", stored, want)
	}
}

func TestSubmitWithoutParentStartsATrace(t *testing.T) {
	tr, exp := newTestTracer(t)
	stored, end := tr.Submit(context.Background(), "", "acme", 1)
	end("job-1", nil)
	sc, err := ParseTraceParent(stored)
	if err != nil || !sc.IsValid() {
		t.Fatalf("stored %q: %v", stored, err)
	}
	if s := exp.GetSpans()[0]; s.Parent.IsValid() {
		t.Fatalf("a submit without a trace has a parent: %v", s.Parent)
	}
}

func TestAttemptSpansUseTheExecutionTimesAndLinkTheRetryToTheAttemptBefore(t *testing.T) {
	tr, exp := newTestTracer(t)
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	a := Attempt{
		TraceParent: callerTP, JobID: "job-1", Type: "build", Tenant: "acme", Lane: "default", Worker: "w1", Attempt: 2,
		ReadyAt: t0, LeasedAt: t0.Add(time.Second), StartedAt: t0.Add(1200 * time.Millisecond), FinishedAt: t0.Add(3 * time.Second),
		Outcome: "failed", FailureClass: "exit_code", Error: "exit 3",
	}
	tr.AttemptEnded(a)
	spans := byName(exp.GetSpans())
	parent, _ := ParseTraceParent(callerTP)
	for name, times := range map[string][2]time.Time{
		"fairway.wait":  {a.ReadyAt, a.LeasedAt},
		"fairway.lease": {a.LeasedAt, a.StartedAt},
		"fairway.run":   {a.StartedAt, a.FinishedAt},
	} {
		s, ok := spans[name]
		if !ok {
			t.Fatalf("no span %s among %v", name, spans)
		}
		if !s.StartTime.Equal(times[0]) || !s.EndTime.Equal(times[1]) {
			t.Errorf("%s: %v..%v, want %v..%v", name, s.StartTime, s.EndTime, times[0], times[1])
		}
		if s.Parent.SpanID() != parent.SpanID() || s.SpanContext.TraceID() != parent.TraceID() {
			t.Errorf("%s: parent %v, want the job's context", name, s.Parent)
		}
	}
	run := spans["fairway.run"]
	if run.SpanContext.SpanID() != AttemptSpanID("job-1", 2, "run") {
		t.Fatalf("run span id %s, want the derived %s", run.SpanContext.SpanID(), AttemptSpanID("job-1", 2, "run"))
	}
	if got := tr.AttemptParent(callerTP, "job-1", 2); got != Format(run.SpanContext) {
		t.Fatalf("AttemptParent %q, want the run span's %q", got, Format(run.SpanContext))
	}
	if len(run.Links) != 1 || run.Links[0].SpanContext.SpanID() != AttemptSpanID("job-1", 1, "run") {
		t.Fatalf("run span links %+v, want attempt 1's run span", run.Links)
	}
	if run.Status.Code.String() != "Error" {
		t.Fatalf("a failed run's status is %v", run.Status)
	}
}

func TestAnAttemptThatNeverStartedHasNoRunSpan(t *testing.T) {
	tr, exp := newTestTracer(t)
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tr.AttemptEnded(Attempt{TraceParent: callerTP, JobID: "j", Attempt: 1, LeasedAt: t0, FinishedAt: t0.Add(10 * time.Second), Outcome: "lost"})
	spans := byName(exp.GetSpans())
	if _, ok := spans["fairway.run"]; ok {
		t.Fatal("a run span for an attempt that never started")
	}
	if _, ok := spans["fairway.lease"]; !ok {
		t.Fatal("no lease span")
	}
}

func TestOffIsNil(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := New(context.Background(), configTracing(""), nil)
	if err != nil || tr != nil {
		t.Fatalf("New with nothing configured: %v, %v", tr, err)
	}
	// every method of a nil tracer is a no-op
	if got, _ := tr.Submit(context.Background(), callerTP, "t", 1); got != callerTP {
		t.Fatalf("off: Submit stored %q, want the caller's context unchanged", got)
	}
	if got := tr.AttemptParent(callerTP, "j", 1); got != callerTP {
		t.Fatalf("off: AttemptParent %q", got)
	}
	tr.AttemptEnded(Attempt{TraceParent: callerTP})
}

func TestParseTraceParentRefusesMalformedValues(t *testing.T) {
	for _, bad := range []string{"x", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"} {
		if _, err := ParseTraceParent(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The derived ids are stable: a worker's TRACEPARENT computed at lease
// names the span written at the end, whichever leader writes it.
func TestAttemptSpanIDIsStable(t *testing.T) {
	if AttemptSpanID("j", 1, "run") != AttemptSpanID("j", 1, "run") || AttemptSpanID("j", 1, "run") == AttemptSpanID("j", 2, "run") {
		t.Fatal("AttemptSpanID is not a function of (job, attempt, kind)")
	}
	var _ sdktrace.IDGenerator = idGenerator{}
	var _ trace.SpanID = AttemptSpanID("j", 1, "run")
}

// BenchmarkOff is what a job's path pays with tracing off: the nil checks
// of Submit, AttemptParent and AttemptEnded.
func BenchmarkOff(b *testing.B) {
	var tr *Tracer
	ctx := context.Background()
	for b.Loop() {
		_, end := tr.Submit(ctx, "", "t", 1)
		end("j", nil)
		_ = tr.AttemptParent("", "j", 1)
		tr.AttemptEnded(Attempt{})
	}
}

func configTracing(endpoint string) config.Tracing { return config.Tracing{Endpoint: endpoint} }
