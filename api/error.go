package api

import "fmt"

// Error codes: stable, machine-readable. See docs/api.md.
const (
	CodeMalformedJSON     = "malformed_json"
	CodeUnknownField      = "unknown_field"
	CodeInvalidArgument   = "invalid_argument"
	CodeUnauthenticated   = "unauthenticated"
	CodePermissionDenied  = "permission_denied"
	CodeNotFound          = "not_found"
	CodeStaleAttempt      = "stale_attempt"
	CodeConflict          = "conflict"
	CodeBodyTooLarge      = "body_too_large"
	CodeUnsupportedMedia  = "unsupported_media_type"
	CodeRateLimited       = "rate_limited"
	CodeOverloaded        = "overloaded"
	CodeInternal          = "internal"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeDeadlineExceeded  = "deadline_exceeded"
	CodeServerUnavailable = "unavailable"
	CodeNotLeader         = "not_leader"    // 503: a standby instance; X-Fairway-Leader names the leader
	CodeMaybeApplied      = "maybe_applied" // 503: the outcome is unknown (connection lost during the commit): retry with the same idempotency key
	CodeInvalidUTF8       = "invalid_utf8"
	CodeUnknownParameter  = "unknown_parameter"
	CodeBatchTooLarge     = "batch_exceeds_burst"
	CodeBadFraming        = "bad_framing"     // no longer sent: chunked request bodies are accepted (issue 28)
	CodeUnrunnable        = "unrunnable"      // 422: no registered worker could ever run the job
	CodeCursorMismatch    = "cursor_mismatch" // 400: a list cursor sent with filters other than its list's
	CodeInvalidSnooze     = "invalid_snooze"  // a completion item (outcome snoozed) whose snooze_ms is out of range: refused, nothing changed
)

// ErrorBody is the error object of every error response.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// ErrorResponse is the body of every error response.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// Error is an API error as a Go error: what the client returns for a 4xx
// or 5xx answer.
type Error struct {
	Status     int // HTTP status
	RetryAfter int // seconds, from Retry-After (0: none)
	ErrorBody
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s (%d): %s [field %s]", e.Code, e.Status, e.Message, e.Field)
	}
	return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message)
}
