package server

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/fairwayhq/fairway/api"
)

// closeAfterChunked lets a request whose body is framed with
// Transfer-Encoding: chunked through (HTTP/1.1 clients stream bodies so:
// curl -T -, a Go io.Pipe body, Python requests with a generator; the
// handlers' body limits bound it as they bound a Content-Length body), and
// closes the connection after the answer.
//
// A request carrying both Content-Length and Transfer-Encoding is the
// request-smuggling shape of RFC 9112 §6.3: a server may answer it by the
// chunked framing alone, and must then close the connection. Go's HTTP
// server does the first (it drops the Content-Length header before a
// handler sees the request), so a handler cannot tell such a request from
// a plain chunked one: every chunked request's connection is closed. The
// bytes after the chunked body are never read as another request.
func closeAfterChunked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// knownParams refuses a query parameter the route does not read: a
// misspelt filter would otherwise be ignored and widen the answer.
func knownParams(r *http.Request, allowed []string) error {
	var unknown []string
	for name := range r.URL.Query() {
		if !slices.Contains(allowed, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	hint := "this route takes no query parameters"
	if len(allowed) > 0 {
		hint = "it takes " + strings.Join(allowed, ", ")
	}
	ae := errf(http.StatusBadRequest, api.CodeUnknownParameter, "unknown query parameter %q on %s %s; %s",
		unknown[0], r.Method, r.URL.Path, hint)
	ae.body.Field = unknown[0]
	return ae
}
