package connlimit

import (
	"io"
	"net/http"
	"time"
)

// BodyDeadline bounds how long a request's body may take to arrive: the
// connection's read deadline is set to d from the start of the request and
// cleared once the body is read to its end, so that a handler that then
// waits (a long poll, a log stream) is not cut off by it. http.Server's
// ReadTimeout cannot do this: it stays armed while the handler runs, and
// its expiry cancels the request's context.
func BodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		_ = rc.SetReadDeadline(time.Now().Add(d))
		r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline at the body's end.
type deadlineBody struct {
	io.ReadCloser
	clear   func()
	cleared bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.cleared {
		b.cleared = true
		b.clear()
	}
	return n, err
}
