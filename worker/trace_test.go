package worker

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/fairwayhq/fairway/api"
)

// A Go handler's ctx carries the attempt's trace context from the lease,
// so its own spans are children of the attempt's run span; a command gets
// it as TRACEPARENT.
func TestTheAttemptsTraceContextReachesTheHandlerAndTheCommand(t *testing.T) {
	const jobTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const runTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-5cd411b40b50c50e-01"
	l := api.Lease{Job: api.Job{ID: "j1", TraceParent: jobTP}, Attempt: 1, TraceParent: runTP}
	task := newTask(context.Background(), session{}, l)
	sc := trace.SpanContextFromContext(task.ctx)
	if !sc.IsValid() || sc.SpanID().String() != "5cd411b40b50c50e" || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("handler ctx span context %v, want the lease's run span", sc)
	}
	if env := jobEnv(Job{Job: task.job}); env["TRACEPARENT"] != runTP {
		t.Fatalf("TRACEPARENT=%q, want %q", env["TRACEPARENT"], runTP)
	}
	plain := newTask(context.Background(), session{}, api.Lease{Job: api.Job{ID: "j2"}, Attempt: 1})
	if trace.SpanContextFromContext(plain.ctx).IsValid() {
		t.Fatal("a job without a trace got a span context")
	}
	if _, ok := jobEnv(Job{Job: plain.job})["TRACEPARENT"]; ok {
		t.Fatal("a job without a trace got TRACEPARENT")
	}
}
