package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// ErrWaitTimeout is returned by SubmitWait, with the job as it is, when the
// server's wait timeout passed before the job ended.
var ErrWaitTimeout = errors.New("client: job not finished within the wait timeout")

// ErrNoEventStream is returned by FollowLogs when the server answers a
// follow request with something other than text/event-stream.
var ErrNoEventStream = errors.New("client: server did not answer with an event stream")

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// decodeError turns a non-2xx answer into *api.Error. An answer that is not
// the API's error JSON is either a proxy's (502, 503, 504 and the like:
// it keeps its status and gets a code derived from it, as a
// *foreignAnswer) or, for a status a fairway server always answers with
// its JSON (400, 404, 405, 501), the sign of something else listening at
// the URL: ErrNotFairway.
func decodeError(resp *http.Response) error {
	e := &api.Error{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody)) // let the connection be reused
	var er api.ErrorResponse
	if json.Unmarshal(body, &er) == nil && er.Error.Code != "" {
		e.ErrorBody = er.Error
		return e
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return notFairwayAnswer(resp)
	}
	e.Code = codeForStatus(resp.StatusCode)
	e.Message = strings.TrimSpace(string(body))
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return &foreignAnswer{e}
}

// ErrNotFairway is returned (wrapped) when the server at the URL answered
// with something other than fairway's API: another program listens there.
// It is a configuration error; the message names the URL.
var ErrNotFairway = errors.New("does not look like a fairway server")

// notFairway is ErrNotFairway with where and what was answered.
type notFairway struct {
	root   string
	status int
	ctype  string
}

func (e *notFairway) Error() string {
	what := e.ctype
	if what == "" {
		what = "no content type"
	}
	return fmt.Sprintf("%s at %s (it answered HTTP %d with %s, not fairway's JSON API)", ErrNotFairway, e.root, e.status, what)
}

func (e *notFairway) Is(target error) bool { return target == ErrNotFairway }

// notFairwayAnswer is the ErrNotFairway of resp.
func notFairwayAnswer(resp *http.Response) error {
	root := ""
	if resp.Request != nil && resp.Request.URL != nil {
		u := *resp.Request.URL
		u.Path, u.RawQuery, u.RawPath = "", "", ""
		root = u.String()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &notFairway{root: root, status: resp.StatusCode, ctype: ct}
}

// foreignAnswer is an error answer that did not come from fairway's API
// (a proxy's page): an *api.Error with a code derived from its status.
type foreignAnswer struct{ e *api.Error }

func (f *foreignAnswer) Error() string { return f.e.Error() }
func (f *foreignAnswer) Unwrap() error { return f.e }

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) int {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n > 0 {
		return n
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return int((d + time.Second - 1) / time.Second)
		}
	}
	return 0
}

var statusCodes = map[int]string{
	http.StatusBadRequest:            api.CodeInvalidArgument,
	http.StatusUnauthorized:          api.CodeUnauthenticated,
	http.StatusForbidden:             api.CodePermissionDenied,
	http.StatusNotFound:              api.CodeNotFound,
	http.StatusMethodNotAllowed:      api.CodeMethodNotAllowed,
	http.StatusConflict:              api.CodeConflict,
	http.StatusRequestEntityTooLarge: api.CodeBodyTooLarge,
	http.StatusUnsupportedMediaType:  api.CodeUnsupportedMedia,
	http.StatusTooManyRequests:       api.CodeRateLimited,
	http.StatusServiceUnavailable:    api.CodeServerUnavailable,
	http.StatusGatewayTimeout:        api.CodeDeadlineExceeded,
	http.StatusBadGateway:            api.CodeServerUnavailable,
}

func codeForStatus(status int) string {
	if c, ok := statusCodes[status]; ok {
		return c
	}
	return api.CodeInternal
}

var codeStatuses = map[string]int{
	api.CodeMalformedJSON:    http.StatusBadRequest,
	api.CodeUnknownField:     http.StatusBadRequest,
	api.CodeInvalidArgument:  http.StatusBadRequest,
	api.CodeUnauthenticated:  http.StatusUnauthorized,
	api.CodePermissionDenied: http.StatusForbidden,
	api.CodeNotFound:         http.StatusNotFound,
	api.CodeStaleAttempt:     http.StatusConflict,
	api.CodeConflict:         http.StatusConflict,
	api.CodeRateLimited:      http.StatusTooManyRequests,
	api.CodeOverloaded:       http.StatusServiceUnavailable,
}

// ResultError turns one item of a Start or Complete answer into an error:
// nil when the item was accepted, else an *api.Error whose Status is the
// one the code has as a whole answer (409 for stale_attempt), so that
// IsStaleAttempt and IsNotFound apply to it.
func ResultError(r api.ItemResult) error {
	if r.OK {
		return nil
	}
	body := api.ErrorBody{Code: api.CodeInternal, Message: "refused without a reason"}
	if r.Error != nil {
		body = *r.Error
	}
	status, ok := codeStatuses[body.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	return &api.Error{Status: status, ErrorBody: body}
}

// APIError returns the *api.Error in err's chain, if any.
func APIError(err error) (*api.Error, bool) {
	var e *api.Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsNotFound reports whether err is the server's 404: no such job or worker
// (or one this key may not see).
func IsNotFound(err error) bool {
	e, ok := APIError(err)
	return ok && (e.Status == http.StatusNotFound || e.Code == api.CodeNotFound)
}

// IsStaleAttempt reports whether err says the attempt a worker presented is
// no longer the job's current one: the worker must stop the job and not
// report it again.
func IsStaleAttempt(err error) bool {
	e, ok := APIError(err)
	return ok && e.Code == api.CodeStaleAttempt
}

// IsRetryable reports whether the same call may succeed later: the server
// was rate limiting (429) or overloaded or unavailable (503, and 502/504
// from a proxy in front of it), or the request did not get an answer at
// all (a network error). A cancelled or expired context is not retryable.
// RetryAfter of the *api.Error, when set, says how long to wait.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if e, ok := APIError(err); ok {
		switch e.Status {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable,
			http.StatusBadGateway, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return IsNetworkError(err)
}

// IsNetworkError reports whether err means the server could not be
// reached or the connection broke before an answer: no *api.Error, and not
// a cancelled context.
func IsNetworkError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if _, ok := APIError(err); ok {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, ErrRequestTimeout) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errStreamDropped)
}

// errStreamDropped marks an event stream that ended before its end event.
var errStreamDropped = errors.New("client: event stream ended before the end event")

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, err)
}
