package ha

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Forwarding. A standby sends what it does not answer itself (writes,
// worker calls, explain, lanes, followed logs) to the leader and copies
// the answer back, so that clients, workers and plain HTTP tools may talk
// to any instance. The answer carries X-Fairway-Leader, so that a client
// that knows it can go to the leader directly next time.
//
// A request is forwarded once: it carries ForwardedByHeader, and an
// instance that receives it while not leading (the leadership moved while
// it travelled) answers 503 not_leader rather than forward it again. If
// the leader cannot be dialled, nothing was sent, and the answer is 503
// not_leader, which a client may retry anywhere. If the connection fails
// after the request went out, the leader may have acted on it: the answer
// is 503 maybe_applied, which clients retry only when the request is safe
// to repeat (a read, or a submit with an idempotency key).

// ForwardedByHeader names the standby that forwarded a request.
const ForwardedByHeader = "X-Fairway-Forwarded-By"

// forwardTransport carries forwarded requests: a dial that fails fast (the
// leader just died), and no response deadline (worker polls and followed
// logs are long).
var forwardTransport = &http.Transport{
	Proxy:               nil,
	DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 128,
	IdleConnTimeout:     90 * time.Second,
}

// forward proxies r to the leader at addr (host:port).
func (n *Node) forward(w http.ResponseWriter, r *http.Request, addr string) {
	if by := r.Header.Get(ForwardedByHeader); by != "" {
		notLeader(w, "this instance does not lead either (the request was forwarded by "+by+
			" while the leadership moved); retry shortly")
		return
	}
	// A request held by the leader ends when this instance stops.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-n.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	r = r.WithContext(ctx)
	if len(r.TransferEncoding) > 0 {
		// The leader closes the connection of a chunked request after
		// its answer (RFC 9112 §6.3: it may carry Content-Length too);
		// the proxy drops that hop-by-hop header, so close the client's.
		w.Header().Set("Connection", "close")
	}
	target := &url.URL{Scheme: "http", Host: addr}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
			pr.Out.Header.Set(ForwardedByHeader, n.opts.Lease.Holder)
		},
		Transport:     forwardTransport,
		FlushInterval: -1, // followed logs and polls stream as they come
		ModifyResponse: func(resp *http.Response) error {
			// The standby's answer names the leader already (standby);
			// the proxy adds the leader's headers to it, so one from
			// the leader would make two.
			resp.Header.Del("X-Fairway-Leader")
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			n.opts.Logger.Warn("ha: forward to the leader failed", "leader", addr, "path", r.URL.Path, "err", err)
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				notLeader(w, "this instance is a standby and the leader at "+addr+" cannot be reached; retry shortly")
				return
			}
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorBody{
				Code: api.CodeMaybeApplied,
				Message: "the leader at " + addr + " did not answer this forwarded request; it may have been applied: " +
					"retry with the same idempotency key (or check before sending it again)"}})
		},
	}
	p.ServeHTTP(w, r)
}

// notLeader is the 503 not_leader answer: nothing was done, retry.
func notLeader(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(1))
	writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeNotLeader, Message: msg}})
}
