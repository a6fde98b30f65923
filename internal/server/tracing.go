package server

import (
	"net/http"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// traceSubmit joins a submit's jobs to a trace (docs/tracing.md). A job
// without a traceparent field takes the request's traceparent header,
// when that is a valid W3C trace context (an invalid header is ignored,
// as W3C Trace Context asks; an invalid field was refused by buildJob).
// With tracing on, the submit span starts under that context and the
// jobs store the span's instead: a single submit's span is the child of
// the job's own context, a batch's of the header. The returned function
// ends the span.
func (s *Server) traceSubmit(r *http.Request, tenant string, jobs []store.Job) func(jobID string, err error) {
	header := r.Header.Get("traceparent")
	if _, err := tracing.ParseTraceParent(header); err != nil {
		header = ""
	}
	if !s.tracer.Enabled() {
		if header != "" {
			for i := range jobs {
				if jobs[i].TraceParent == "" {
					jobs[i].TraceParent = header
				}
			}
		}
		return func(string, error) {}
	}
	parent := header
	if len(jobs) == 1 && jobs[0].TraceParent != "" {
		parent = jobs[0].TraceParent
	}
	tenantAttr := tenant
	tp, end := s.tracer.Submit(r.Context(), parent, tenantAttr, len(jobs))
	for i := range jobs {
		if len(jobs) == 1 || jobs[i].TraceParent == "" {
			jobs[i].TraceParent = tp
		}
	}
	return end
}
