package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/ui"
)

// handlerFunc is an API handler: it acts as principal p and returns an
// error to answer with, or nil when it has written its answer.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p principal) error

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.Handle("GET /metrics", s.wrap("GET /metrics", s.handleMetrics, nil))
	mux.Handle("GET /{$}", ui.Handler())
	mux.Handle("GET /ui/", ui.Handler())
	mux.HandleFunc("GET /api/v1/openapi.json", s.handleOpenAPI)
	summary := []string{"since", "until", "start_date", "end_date", "type", "tenant", "lane"}
	scoped := []string{"since", "until", "start_date", "end_date"}
	for _, rt := range []struct {
		pattern string
		h       handlerFunc
		params  []string // the query parameters the route reads; any other is refused
	}{
		{"POST /api/v1/jobs", s.handleSubmit, []string{"wait", "timeout_ms"}},
		{"POST /api/v1/jobs/batch", s.handleBatch, nil},
		{"GET /api/v1/jobs", s.handleList, []string{"type", "lane", "tenant", "cursor", "state", "status", "limit", "created_after", "created_before", "count", "tag", "schedule_id"}},
		{"GET /api/v1/jobs/{id}", s.handleGet, nil},
		{"DELETE /api/v1/jobs/{id}", s.handleCancel, nil},
		{"POST /api/v1/jobs/{id}/cancel", s.handleCancel, nil},
		{"POST /api/v1/jobs/{id}/reprioritize", s.handleReprioritize, nil},
		{"POST /api/v1/jobs/{id}/hold", s.handleHold, nil},
		{"POST /api/v1/jobs/{id}/release", s.handleRelease, nil},
		{"POST /api/v1/jobs/{id}/retry", s.handleRetry, nil},
		{"POST /api/v1/jobs/retry", s.handleRetryMany, nil},
		{"POST /api/v1/jobs/{id}/extend-sla", s.handleExtendSLA, nil},
		{"GET /api/v1/jobs/{id}/executions", s.handleExecutions, []string{"limit", "cursor"}},
		{"GET /api/v1/jobs/{id}/events", s.handleEvents, nil},
		{"GET /api/v1/jobs/{id}/logs", s.handleLogs, []string{"follow", "stream", "attempt", "after_attempt", "after_seq", "limit", "q"}},
		{"GET /api/v1/jobs/{id}/explain", s.handleExplain, nil},
		{"GET /api/v1/jobs/{id}/failures", s.scopedReport(s.failures, false), append([]string{"limit"}, scoped...)},
		{"GET /api/v1/jobs/{id}/successes", s.scopedReport(s.successes, false), scoped},
		{"GET /api/v1/jobs/{id}/sla-compliance", s.scopedReport(s.slaCompliance, false), scoped},
		{"GET /api/v1/schedules/{id}/failures", s.scopedReport(s.failures, true), append([]string{"limit"}, scoped...)},
		{"GET /api/v1/schedules/{id}/successes", s.scopedReport(s.successes, true), scoped},
		{"GET /api/v1/schedules/{id}/sla-compliance", s.scopedReport(s.slaCompliance, true), scoped},
		{"GET /api/v1/failures", s.handleFailures, append([]string{"limit"}, summary...)},
		{"GET /api/v1/successes", s.handleSuccesses, summary},
		{"GET /api/v1/sla-compliance", s.handleSLACompliance, summary},
		{"GET /api/v1/usage", s.handleUsage, []string{"since", "until", "by"}},
		{"GET /api/v1/series", s.handleSeries, []string{"since", "until", "step", "tenant", "lane", "type"}},
		{"POST /api/v1/schedules", s.handleScheduleCreate, nil},
		{"GET /api/v1/schedules", s.handleScheduleList, []string{"tenant", "cursor", "limit", "tag"}},
		{"GET /api/v1/schedules/{id}", s.handleScheduleGet, nil},
		{"PUT /api/v1/schedules/{id}", s.handleScheduleUpdate, nil},
		{"DELETE /api/v1/schedules/{id}", s.handleScheduleDelete, nil},
		{"POST /api/v1/schedules/{id}/pause", s.handleSchedulePause, nil},
		{"POST /api/v1/schedules/{id}/resume", s.handleScheduleResume, nil},
		{"POST /api/v1/schedules/{id}/trigger", s.handleScheduleTrigger, nil},
		{"POST /api/v1/schedules/{id}/backfill", s.handleScheduleBackfill, nil},
		{"GET /api/v1/schedules/{id}/events", s.handleScheduleEvents, []string{"type", "after_id", "limit"}},
		{"GET /api/v1/events", s.handleAuditEvents, []string{"type", "job_id", "schedule_id", "actor", "tenant", "since", "until", "after_id", "limit"}},
		{"GET /api/v1/lanes", s.handleLanes, []string{"costs"}},
		{"GET /api/v1/tenants", s.handleTenants, nil},
		{"POST /api/v1/keys", s.handleKeyCreate, nil},
		{"POST /api/v1/webhooks", s.handleWebhookCreate, nil},
		{"GET /api/v1/webhooks", s.handleWebhookList, nil},
		{"DELETE /api/v1/webhooks/{name}", s.handleWebhookDelete, nil},
		{"GET /api/v1/keys", s.handleKeyList, []string{"tenant"}},
		{"DELETE /api/v1/keys/{id}", s.handleKeyRevoke, nil},
		{"POST /api/v1/lanes/{name}/pause", s.handleLanePause, nil},
		{"POST /api/v1/lanes/{name}/resume", s.handleLaneResume, nil},
		{"GET /api/v1/workers", s.handleWorkers, nil},
		{"POST /api/v1/workers/register", s.handleRegister, nil},
		{"POST /api/v1/workers/{id}/lease", s.handleLease, nil},
		{"POST /api/v1/workers/{id}/start", s.handleStart, nil},
		{"POST /api/v1/workers/{id}/heartbeat", s.handleHeartbeat, nil},
		{"POST /api/v1/workers/{id}/complete", s.handleComplete, nil},
		{"POST /api/v1/workers/{id}/logs", s.handleLogAppend, nil},
		{"POST /api/v1/workers/{id}/deregister", s.handleDeregister, nil},
	} {
		mux.Handle(rt.pattern, s.wrap(rt.pattern, rt.h, rt.params))
	}
	return s.recoverer(closeAfterChunked(jsonMuxErrors(mux)))
}

// wrap authenticates, refuses query parameters the route does not read,
// and turns a returned error into its JSON answer.
func (s *Server) wrap(route string, h handlerFunc, params []string) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		began := time.Now()
		w := &statusWriter{ResponseWriter: rw, code: http.StatusOK}
		defer func() { s.metrics.Request(route, w.code, time.Since(began)) }()
		p, aerr := s.auth.identify(r)
		if aerr != nil {
			s.writeError(w, r, aerr)
			return
		}
		if err := knownParams(r, params); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := h(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// jsonMuxErrors rewrites the mux's own plain-text 404 and 405 answers
// into the API's JSON error shape.
func jsonMuxErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&methodWriter{ResponseWriter: w, r: r}, r)
	})
}

type methodWriter struct {
	http.ResponseWriter
	r        *http.Request
	replaced bool
}

func (m *methodWriter) WriteHeader(code int) {
	if !strings.HasPrefix(m.Header().Get("Content-Type"), "text/plain") {
		m.ResponseWriter.WriteHeader(code)
		return
	}
	switch code {
	case http.StatusMethodNotAllowed:
		m.replaced = true
		writeJSON(m.ResponseWriter, code, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeMethodNotAllowed, Message: "method " + m.r.Method + " not allowed on " + m.r.URL.Path + "; allowed: " + m.Header().Get("Allow")}})
	case http.StatusNotFound:
		m.replaced = true
		writeJSON(m.ResponseWriter, code, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeNotFound, Message: "no route " + m.r.Method + " " + m.r.URL.Path}})
	default:
		m.ResponseWriter.WriteHeader(code)
	}
}

func (m *methodWriter) Write(b []byte) (int, error) {
	if m.replaced {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

// Flush lets SSE handlers flush through the wrapper.
func (m *methodWriter) Flush() {
	if f, ok := m.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if err := s.Ready(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeServerUnavailable, Message: err.Error()}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// Ready is nil once the server serves: its state rebuilt and the
// dispatcher running; else it says why not ("starting", "dispatcher
// stopped").
func (s *Server) Ready() error {
	select {
	case <-s.done:
		return errors.New("dispatcher stopped")
	default:
	}
	if !s.ready.Load() {
		return errors.New("starting")
	}
	return nil
}

// statusWriter remembers the status code a handler answered with (for
// fairway_http_requests_total); Flush and Unwrap keep streaming answers
// (followed logs) working through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
