package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/fairwayhq/fairway/api"
	"go.opentelemetry.io/otel/propagation"
)

// DefaultUserAgent is sent when no WithUserAgent option is given.
const DefaultUserAgent = "fairway-go-client/1"

// Client talks to a fairway server, or to the instances of one (see
// New). It is safe for concurrent use; create one and share it.
type Client struct {
	ends *endpoints // the instances, and the one in use
	hc   *http.Client
	auth string // "Bearer <key>", or empty
	ua   string
	// requestTimeout bounds one attempt; retryDeadline all of a call's
	// attempts (failover.go).
	requestTimeout time.Duration
	retryDeadline  time.Duration
	// noKeys: submits without an idempotency key are sent without one
	// (WithoutGeneratedKeys).
	noKeys bool
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as a bearer token on every request.
func WithAPIKey(key string) Option {
	return func(c *Client) {
		if key != "" {
			c.auth = "Bearer " + key
		}
	}
}

// WithHTTPClient makes the Client use hc as is instead of its own tuned
// one. Do not give hc a Timeout: it would cut long polls (Lease,
// SubmitWait, FollowLogs); bound calls with context deadlines instead.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithoutGeneratedKeys makes Submit, SubmitWait and SubmitBatch send a
// spec without an idempotency key as it is, instead of giving it one made
// up by the client (GeneratedKeyPrefix). The server then claims no key for
// it: on SQLite that halves the CPU a submit costs the server
// (docs/benchmarks.md). The price is the retry's safety: a submit whose
// outcome is unknown (a lost answer, 503 maybe_applied) is not sent again
// but returned as an error, since sending it again could run the job
// twice. Specs the caller gives a key keep it and are retried as before.
func WithoutGeneratedKeys() Option {
	return func(c *Client) { c.noKeys = true }
}

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option {
	return func(c *Client) { c.ua = ua }
}

// New returns a Client for the server at baseURL, e.g.
// "http://127.0.0.1:7070". A base URL that already ends in /api/v1 is
// accepted, and one without a scheme gets http://. Several instances of
// one server (on PostgreSQL, one leads) are given comma-separated:
// "http://a:7070,http://b:7070"; the Client then finds the leader and
// follows it across failovers (see failover.go).
func New(baseURL string, opts ...Option) (*Client, error) {
	ends, err := newEndpoints(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{ends: ends, ua: DefaultUserAgent, requestTimeout: DefaultRequestTimeout, retryDeadline: DefaultRetryDeadline}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: newTransport()}
	}
	return c, nil
}

func normalizeBase(baseURL string) (string, error) {
	s := strings.TrimSpace(baseURL)
	if s == "" {
		return "", fmt.Errorf("client: empty server URL")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("client: server URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("client: server URL %q: want http(s)://host[:port]", baseURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v1")
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

// newTransport is http.DefaultTransport tuned for many concurrent requests
// to one server: a large idle pool per host so that hundreds of goroutines
// reuse connections instead of dialling, and no response-header timeout
// (long polls answer late by design).
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConns = 2048
	t.MaxIdleConnsPerHost = 1024
	t.IdleConnTimeout = 90 * time.Second
	t.ResponseHeaderTimeout = 0
	return t
}

// BaseURL is the root URL (without /api/v1) of the instance in use.
func (c *Client) BaseURL() string { return c.ends.current() }

// bufPool holds response buffers; large ones are not kept.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuf = 1 << 20

func getBuf() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuf {
		return
	}
	b.Reset()
	bufPool.Put(b)
}

// call is one JSON request: method and path under /api/v1, an optional
// query, an optional body to encode and an optional value to decode the
// 2xx answer into. It returns the HTTP status.
type call struct {
	method string
	path   string
	query  url.Values
	in     any
	out    any
	// idemKey, if set, is sent as the Idempotency-Key header, which also
	// lets net/http resend the request on a pooled connection that turned
	// out to be closed.
	idemKey string
	// submitToken, if set, is sent as api.SubmitTokenHeader (and as
	// X-Idempotency-Key, for net/http's resend on a closed pooled
	// connection): the call may be sent again for SubmitTokenResendLimit.
	submitToken string
	// idempotent: sending the call twice has the effect of sending it
	// once (a worker's log chunks, by attempt and seq), so it is retried
	// like a read.
	idempotent bool
	// snapshot: the body is the caller's state when it was made (a
	// heartbeat): see retryPolicy.
	snapshot bool
	// wait is how long the server may hold the answer (a long poll).
	wait time.Duration
}

func (c *Client) do(ctx context.Context, k call) (int, error) {
	return c.withFailover(ctx, policyOf(k), func(root string) (int, string, error) { return c.doAt(ctx, root, k) })
}

// doAt sends one call to the instance at root, bounded by the attempt
// timeout; it returns the status, the leader a standby named
// (X-Fairway-Leader) and the error.
func (c *Client) doAt(ctx context.Context, root string, k call) (int, string, error) {
	actx := ctx
	limit := c.attemptTimeout(k)
	if limit > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	req, err := c.newRequest(actx, k.method, root+"/api/v1"+k.path, k.query, k.in)
	if err != nil {
		return 0, "", err
	}
	if k.idemKey != "" {
		req.Header.Set("Idempotency-Key", k.idemKey)
	}
	if k.submitToken != "" {
		req.Header.Set(api.SubmitTokenHeader, k.submitToken)
		req.Header.Set("X-Idempotency-Key", k.submitToken)
	}
	// The caller's trace, if its ctx carries a span: a submitted job joins
	// it (docs/tracing.md). Nothing is set without one.
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", attemptError(ctx, actx, root, limit, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, resp.Header.Get("X-Fairway-Leader"), attemptError(ctx, actx, root, limit, decodeError(resp))
	}
	if err := decodeBody(resp.Body, k.out); err != nil {
		if errors.Is(err, errUndecodable) && isHTML(resp) {
			return resp.StatusCode, "", notFairwayAnswer(resp)
		}
		return resp.StatusCode, "", attemptError(ctx, actx, root, limit, err)
	}
	return resp.StatusCode, "", nil
}

// attemptError names an attempt that ran out of its own time (not the
// call's) ErrRequestTimeout, so that it is told apart from the caller's
// deadline and retried elsewhere.
func attemptError(ctx, actx context.Context, root string, limit time.Duration, err error) error {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w (%s from %s)", ErrRequestTimeout, limit, root)
	}
	return err
}

// isHTML reports whether resp says its body is a web page: what a web
// server that is not fairway answers.
func isHTML(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/html" || mt == "application/xhtml+xml"
}

func (c *Client) newRequest(ctx context.Context, method, u string, q url.Values, in any) (*http.Request, error) {
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := segjson.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("client: encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	c.setCommon(req)
	return req, nil
}

func (c *Client) setCommon(req *http.Request) {
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if c.ua != "" {
		req.Header.Set("User-Agent", c.ua)
	}
}

// decodeBody reads the whole body into a pooled buffer (so the connection
// goes back to the pool) and decodes it into out, if out is not nil.
//
// Bodies are encoded and decoded with github.com/segmentio/encoding/json,
// a drop-in replacement for encoding/json that yields the same values
// (codec_test.go) at about a quarter of the CPU for a lease: decoding the
// worker protocol's answers was the client's largest cost per job.
func decodeBody(r io.Reader, out any) error {
	buf := getBuf()
	defer putBuf(buf)
	if _, err := buf.ReadFrom(r); err != nil {
		return fmt.Errorf("client: read response: %w", err)
	}
	if out == nil || buf.Len() == 0 {
		return nil
	}
	if err := segjson.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("client: decode response: %w: %w", errUndecodable, err)
	}
	return nil
}

// errUndecodable marks a 2xx answer whose body is not the JSON expected.
var errUndecodable = errors.New("not the JSON expected")

// jobPath is /jobs/{id}[suffix] with id escaped.
func jobPath(id, suffix string) string {
	return "/jobs/" + url.PathEscape(id) + suffix
}

// workerPath is /workers/{id}/{verb} with id escaped.
func workerPath(id, verb string) string {
	return "/workers/" + url.PathEscape(id) + "/" + verb
}

func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// CloseIdleConnections closes the idle connections of the Client's pool.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
