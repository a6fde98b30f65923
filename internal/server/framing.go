package server

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/fairwayhq/fairway/api"
)

// refuseChunkedBodies answers 400 bad_framing to a request that frames its
// body with Transfer-Encoding, and closes the connection. Every fairway
// client sends Content-Length. A request carrying both Content-Length and
// Transfer-Encoding is the request-smuggling shape RFC 9112 §6.3 says a
// server ought to treat as an error; Go's HTTP server drops the
// Content-Length header of such a request before a handler sees it, so the
// one check that catches it is to refuse Transfer-Encoding framing.
func refuseChunkedBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusBadRequest, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeBadFraming,
			Message: "Transfer-Encoding " + strings.Join(r.TransferEncoding, ", ") +
				" is not accepted: send the body with a Content-Length header (and never both)"}})
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
