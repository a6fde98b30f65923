package server

import (
	"bufio"
	"bytes"
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/dispatch"
	"github.com/fairwayhq/fairway/internal/store"
)

// Body limits.
const (
	maxBody      = 1 << 20
	maxBatchBody = 8 << 20
)

// apiError is an error with its HTTP answer.
type apiError struct {
	status     int
	body       api.ErrorBody
	retryAfter int
}

func (e *apiError) Error() string { return e.body.Code + ": " + e.body.Message }

func errf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, body: api.ErrorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

func notFound(what, id string) *apiError {
	return errf(http.StatusNotFound, api.CodeNotFound, "no %s %s", what, id)
}

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString(`{"error":{"code":"internal","message":"encode response"}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeError answers with the error's JSON body; unknown errors are 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae := s.classify(err)
	if ae.status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if ae.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	if ae.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fairway"`)
	}
	writeJSON(w, ae.status, api.ErrorResponse{Error: ae.body})
}

func (s *Server) classify(err error) *apiError {
	var ae *apiError
	var fe *fieldError
	var dfe *dispatch.FieldError
	var qe *dispatch.QuotaError
	var ue *dispatch.UnrunnableError
	var uw *dispatch.UnknownWorkerError
	var ul *dispatch.UnknownLaneError
	var us *dispatch.ScheduleNotFoundError
	var kd *dispatch.KeyOfDeletedJobError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &fe):
		return &apiError{status: http.StatusBadRequest, body: api.ErrorBody{Code: api.CodeInvalidArgument, Message: fe.Error(), Field: fe.field}}
	case errors.As(err, &dfe):
		return &apiError{status: http.StatusBadRequest, body: api.ErrorBody{Code: api.CodeInvalidArgument, Message: dfe.Error(), Field: dfe.Field}}
	case errors.As(err, &qe):
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeOverloaded, Message: qe.Msg}, retryAfter: 5}
	case errors.As(err, &ue):
		return &apiError{status: http.StatusUnprocessableEntity, body: api.ErrorBody{Code: api.CodeUnrunnable, Message: ue.Msg}}
	case errors.As(err, &us):
		return notFound("schedule", us.ID)
	case errors.As(err, &kd):
		return &apiError{status: http.StatusConflict, body: api.ErrorBody{Code: api.CodeConflict, Message: kd.Error(), Field: "idempotency_key"}}
	case errors.As(err, &ul):
		return notFound("lane", ul.Lane)
	case errors.As(err, &uw):
		return notFound("worker", uw.ID+" (register again)")
	case errors.Is(err, store.ErrFenced):
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeNotLeader,
			Message: "this instance stopped leading before the change was committed; nothing was changed: retry (another instance leads)"}, retryAfter: 1}
	case errors.Is(err, store.ErrKeyHeld):
		// A batch's idempotency key, read as free, was claimed before its
		// commit (another instance, about to be fenced, took it): the batch
		// rolled back, and so did every Write queued behind it.
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeServerUnavailable,
			Message: "an idempotency key of this change, or of one committed with it, was claimed by another instance " +
				"before the commit; nothing was changed: retry (a submit with that key is then answered with its holder)"}, retryAfter: 1}
	case errors.Is(err, store.ErrMaybeApplied) || connectionLost(err):
		return maybeApplied()
	case errors.Is(err, store.ErrUnavailable) || databaseRefused(err):
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeServerUnavailable,
			Message: "the database cannot be reached; nothing was changed: retry"}, retryAfter: 1}
	case errors.Is(err, context.Canceled):
		// The dispatcher's context ended (shutdown, or the end of a term as
		// leader) before the commit: a store checks it before COMMIT.
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeServerUnavailable,
			Message: "this server stopped (shutting down, or no longer leading) before the change was committed; nothing was changed: retry"}, retryAfter: 1}
	case errors.Is(err, ErrClosed):
		return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeServerUnavailable, Message: "the server is shutting down"}, retryAfter: 1}
	}
	return errf(http.StatusInternalServerError, api.CodeInternal, "internal error; see the server log")
}

// maybeApplied is the answer when the database connection failed while a
// commit was on its way: the change may or may not have been applied.
func maybeApplied() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, body: api.ErrorBody{Code: api.CodeMaybeApplied,
		Message: "the database connection was lost while the change was being committed: it may have been applied; " +
			"retry with the same idempotency key (a retry without one may apply it twice)"}, retryAfter: 1}
}

// connectionLost reports whether err is a broken connection to the
// database that the store did not name (store.ErrUnavailable or
// store.ErrMaybeApplied): a database outage is never a 500. Since the
// server cannot tell whether the change went through, it is answered as
// maybe applied.
func connectionLost(err error) bool {
	if errors.Is(err, store.ErrUnavailable) {
		return false
	}
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, driver.ErrBadConn)
}

// databaseRefused reports whether err carries a SQLSTATE by which the
// database refuses the connection rather than the statement (too many
// connections, shutting down, starting, a connection exception): a read
// that met it changed nothing. A write's such error is named by the store
// (store.ErrUnavailable, or store.ErrMaybeApplied during a commit).
func databaseRefused(err error) bool {
	var se interface{ SQLState() string }
	if !errors.As(err, &se) {
		return false
	}
	switch code := se.SQLState(); code {
	case "53300", "57P01", "57P02", "57P03":
		return true
	default:
		return strings.HasPrefix(code, "08")
	}
}

// decode reads a JSON body strictly: one object, no unknown fields, within
// limit bytes.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) *apiError {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return errf(http.StatusUnsupportedMediaType, api.CodeUnsupportedMedia, "body must be application/json, got %q", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		if r.ContentLength < 0 {
			discardRest(r.Body)
		}
		return errf(http.StatusRequestEntityTooLarge, api.CodeBodyTooLarge, "body larger than %d bytes", limit)
	}
	if err != nil {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "read body: %v", err)
	}
	return decodeBytes(body, v)
}

// maxDiscard bounds the bytes of a refused chunked body read past the body
// limit and dropped.
const maxDiscard = 16 << 20

// discardRest reads a refused body of unknown length (chunked) to its end,
// up to maxDiscard bytes, before the 413 goes out. A client streaming its
// body does not read the answer until it has sent the body: if the server
// closed the connection while the client was still sending, the client
// would see the connection reset, not the 413. A body longer than that
// still meets the reset; the body deadline bounds the time spent.
func discardRest(body io.Reader) {
	_, _ = io.CopyN(io.Discard, body, maxDiscard)
}

// decodeOptional is decode for a body that may be left out: an empty body,
// whether framed by Content-Length: 0 or as an empty chunked body, leaves v
// as it is.
func decodeOptional(w http.ResponseWriter, r *http.Request, limit int64, v any) *apiError {
	if r.ContentLength == 0 {
		return nil
	}
	rd := bufio.NewReader(r.Body)
	if _, err := rd.Peek(1); err == io.EOF {
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{rd, r.Body}
	return decode(w, r, limit, v)
}

func decodeBytes(body []byte, v any) *apiError {
	if !utf8.Valid(body) {
		return invalidUTF8(body)
	}
	if decodeFast(body, v) {
		return nil
	}
	return decodeStd(body, v)
}

// decodeStd decodes body into v strictly with encoding/json, and names
// what is wrong with it.
func decodeStd(body []byte, v any) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if isTimeError(err) {
			return timeError(body)
		}
		return jsonError(err, reflect.TypeOf(v))
	}
	if dec.More() {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "body has data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "body has data after the JSON value")
	}
	return nil
}

func jsonError(err error, root reflect.Type) *apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "body is empty; expected a JSON object")
	case errors.As(err, &se):
		return errf(http.StatusBadRequest, api.CodeMalformedJSON, "malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return typeError(te, root)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		ae := errf(http.StatusBadRequest, api.CodeUnknownField, "unknown field %q", f)
		ae.body.Field = f
		return ae
	}
	return errf(http.StatusBadRequest, api.CodeMalformedJSON, "malformed JSON: %v", err)
}

// recoverer turns a panic into a 500 JSON answer; no panic reaches a
// client as a dropped connection.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", slog.AnyValue(stack()))
				writeJSON(w, http.StatusInternalServerError, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeInternal, Message: "internal error; see the server log"}})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
