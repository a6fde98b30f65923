package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/fairwayhq/fairway/internal/config"
)

// Tracer writes the spans of jobs. A nil *Tracer is tracing off.
type Tracer struct {
	tp *sdktrace.TracerProvider
	tr trace.Tracer
}

// Enabled reports whether t records spans.
func (t *Tracer) Enabled() bool { return t != nil }

// New builds the tracer cfg asks for: nil (off) when neither cfg nor the
// standard OTEL_EXPORTER_OTLP_*ENDPOINT variables name an endpoint.
func New(ctx context.Context, cfg config.Tracing, log *slog.Logger) (*Tracer, error) {
	var opts []otlptracehttp.Option
	switch {
	case cfg.Endpoint != "":
		u, err := url.Parse(cfg.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("tracing: endpoint: %w", err)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	case os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "":
		return nil, nil
	}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	if log != nil {
		log.Info("tracing: exporting spans with OTLP/HTTP", "endpoint", cfg.Endpoint)
	}
	return newTracer(sdktrace.NewBatchSpanProcessor(exp), cfg.ServiceName), nil
}

// NewWithExporter is a tracer that hands each span to exp as it ends (no
// batching): for tests and tools.
func NewWithExporter(exp sdktrace.SpanExporter, service string) *Tracer {
	return newTracer(sdktrace.NewSimpleSpanProcessor(exp), service)
}

func newTracer(proc sdktrace.SpanProcessor, service string) *Tracer {
	if service == "" {
		service = "fairway"
	}
	res := resource.NewSchemaless(semconv.ServiceName(service))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(proc),
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	)
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/fairwayhq/fairway")}
}

// Shutdown exports what is buffered and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// ParseTraceParent checks a W3C traceparent value; "" is valid (none).
func ParseTraceParent(tp string) (trace.SpanContext, error) {
	if tp == "" {
		return trace.SpanContext{}, nil
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return sc, fmt.Errorf("traceparent %q is not a W3C trace context (version-traceid-spanid-flags, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01)", tp)
	}
	return sc, nil
}

// Format writes sc as a traceparent value ("" for an invalid one).
func Format(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c["traceparent"]
}

// Submit starts the span of a submit under parent (a traceparent, "" for
// a new trace). It returns the traceparent to store with the job and the
// function that ends the span with the job's id and the outcome. Off, it
// returns parent unchanged.
func (t *Tracer) Submit(ctx context.Context, parent, tenant string, jobs int) (string, func(jobID string, err error)) {
	if t == nil {
		return parent, func(string, error) {}
	}
	if sc, err := ParseTraceParent(parent); err == nil && sc.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	ctx, span := t.tr.Start(ctx, "fairway.submit", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("fairway.tenant", tenant), attribute.Int("fairway.jobs", jobs)))
	return Format(span.SpanContext()), func(jobID string, err error) {
		if jobID != "" {
			span.SetAttributes(attribute.String("fairway.job.id", jobID))
		}
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// AttemptParent is the trace context a worker runs attempt under: the run
// span's (see AttemptSpanID) when tracing is on and the job has a trace;
// off, the job's own stored traceparent.
func (t *Tracer) AttemptParent(jobTraceParent, jobID string, attempt int) string {
	if t == nil || jobTraceParent == "" {
		return jobTraceParent
	}
	sc, err := ParseTraceParent(jobTraceParent)
	if err != nil {
		return ""
	}
	return Format(sc.WithSpanID(AttemptSpanID(jobID, attempt, "run")).WithRemote(false))
}

// Attempt is what the spans of one ended attempt are made of: the
// execution record's times and outcome.
type Attempt struct {
	TraceParent                  string // the job's stored context
	JobID, Type, Tenant, Lane    string
	Worker                       string
	Attempt                      int
	ReadyAt, LeasedAt            time.Time // ReadyAt zero: no wait span
	StartedAt, FinishedAt        time.Time // StartedAt zero: it never ran
	Outcome, FailureClass, Error string
}

// AttemptEnded writes the attempt's wait, lease and run spans.
func (t *Tracer) AttemptEnded(a Attempt) {
	if t == nil || a.TraceParent == "" || a.LeasedAt.IsZero() {
		return
	}
	parent, err := ParseTraceParent(a.TraceParent)
	if err != nil {
		return
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	attrs := []attribute.KeyValue{
		attribute.String("fairway.job.id", a.JobID), attribute.Int("fairway.attempt", a.Attempt),
		attribute.String("fairway.job.type", a.Type), attribute.String("fairway.tenant", a.Tenant),
		attribute.String("fairway.lane", a.Lane), attribute.String("fairway.worker", a.Worker),
	}
	var links []trace.Link
	if a.Attempt > 1 {
		prev := parent.WithSpanID(AttemptSpanID(a.JobID, a.Attempt-1, "run")).WithRemote(false)
		links = append(links, trace.Link{SpanContext: prev, Attributes: []attribute.KeyValue{attribute.String("fairway.link", "previous_attempt")}})
	}
	if !a.ReadyAt.IsZero() && !a.ReadyAt.After(a.LeasedAt) {
		t.span(ctx, "fairway.wait", a, "wait", a.ReadyAt, a.LeasedAt, attrs, links, trace.SpanKindInternal, nil)
	}
	leaseEnd := a.StartedAt
	if leaseEnd.IsZero() {
		leaseEnd = a.FinishedAt
	}
	if !leaseEnd.IsZero() {
		t.span(ctx, "fairway.lease", a, "lease", a.LeasedAt, leaseEnd, attrs, nil, trace.SpanKindInternal, nil)
	}
	if !a.StartedAt.IsZero() && !a.FinishedAt.IsZero() {
		end := func(s trace.Span) {
			s.SetAttributes(attribute.String("fairway.outcome", a.Outcome))
			if a.FailureClass != "" {
				s.SetAttributes(attribute.String("fairway.failure_class", a.FailureClass))
			}
			if a.Outcome != "succeeded" {
				s.SetStatus(codes.Error, a.Outcome+": "+a.Error)
			}
		}
		t.span(ctx, "fairway.run", a, "run", a.StartedAt, a.FinishedAt, attrs, links, trace.SpanKindConsumer, end)
	}
}

// span writes one span with fixed times and the id AttemptSpanID derives.
func (t *Tracer) span(ctx context.Context, name string, a Attempt, kind string, start, end time.Time,
	attrs []attribute.KeyValue, links []trace.Link, sk trace.SpanKind, more func(trace.Span)) {
	ctx = context.WithValue(ctx, spanIDKey{}, AttemptSpanID(a.JobID, a.Attempt, kind))
	_, s := t.tr.Start(ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...), trace.WithLinks(links...), trace.WithSpanKind(sk))
	if more != nil {
		more(s)
	}
	s.End(trace.WithTimestamp(end))
}

// AttemptSpanID is the span id of an attempt's span of the given kind
// ("wait", "lease", "run"): the first 8 bytes of SHA-256 over the job id,
// the attempt and the kind, never zero.
func AttemptSpanID(jobID string, attempt int, kind string) trace.SpanID {
	sum := sha256.Sum256([]byte(jobID + "\x00" + strconv.Itoa(attempt) + "\x00" + kind))
	var id trace.SpanID
	copy(id[:], sum[:8])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// spanIDKey carries a span id the next span must take.
type spanIDKey struct{}

// idGenerator makes random ids, except a span id put in the context
// under spanIDKey.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, idGenerator{}.NewSpanID(ctx, tid)
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(spanIDKey{}).(trace.SpanID); ok {
		return id
	}
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
