package worker

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// withTraceParent puts the attempt's W3C trace context (Lease.TraceParent:
// the run span's, when the server traces) into ctx as the remote parent,
// so spans a handler starts from its ctx with any OpenTelemetry tracer
// are children of the attempt's run span. An empty or invalid value
// leaves ctx as it is.
func withTraceParent(ctx context.Context, traceParent string) context.Context {
	if traceParent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceParent})
}
