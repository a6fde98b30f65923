package server

import (
	"net/http"
	"strings"

	"github.com/fairwayhq/fairway/api"
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
	mux.HandleFunc("GET /api/v1/openapi.json", s.handleOpenAPI)
	for pattern, h := range map[string]handlerFunc{
		"POST /api/v1/jobs":                    s.handleSubmit,
		"POST /api/v1/jobs/batch":              s.handleBatch,
		"GET /api/v1/jobs":                     s.handleList,
		"GET /api/v1/jobs/{id}":                s.handleGet,
		"DELETE /api/v1/jobs/{id}":             s.handleCancel,
		"POST /api/v1/jobs/{id}/cancel":        s.handleCancel,
		"POST /api/v1/jobs/{id}/reprioritize":  s.handleReprioritize,
		"POST /api/v1/jobs/{id}/extend-sla":    s.handleExtendSLA,
		"GET /api/v1/jobs/{id}/executions":     s.handleExecutions,
		"GET /api/v1/jobs/{id}/events":         s.handleEvents,
		"GET /api/v1/jobs/{id}/logs":           s.handleLogs,
		"GET /api/v1/jobs/{id}/explain":        s.handleExplain,
		"GET /api/v1/failures":                 s.handleFailures,
		"GET /api/v1/successes":                s.handleSuccesses,
		"GET /api/v1/sla-compliance":           s.handleSLACompliance,
		"GET /api/v1/lanes":                    s.handleLanes,
		"GET /api/v1/workers":                  s.handleWorkers,
		"POST /api/v1/workers/register":        s.handleRegister,
		"POST /api/v1/workers/{id}/lease":      s.handleLease,
		"POST /api/v1/workers/{id}/start":      s.handleStart,
		"POST /api/v1/workers/{id}/heartbeat":  s.handleHeartbeat,
		"POST /api/v1/workers/{id}/complete":   s.handleComplete,
		"POST /api/v1/workers/{id}/logs":       s.handleLogAppend,
		"POST /api/v1/workers/{id}/deregister": s.handleDeregister,
	} {
		mux.Handle(pattern, s.wrap(h))
	}
	return s.recoverer(jsonMuxErrors(mux))
}

// wrap authenticates and turns a returned error into its JSON answer.
func (s *Server) wrap(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, aerr := s.auth.identify(r)
		if aerr != nil {
			s.writeError(w, r, aerr)
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
	select {
	case <-s.done:
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeServerUnavailable, Message: "dispatcher stopped"}})
		return
	default:
	}
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeServerUnavailable, Message: "starting"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
