package embedded

import (
	"io"
	"net/http"
	"sync"
)

// handlerTransport is an http.RoundTripper that serves each request with
// an http.Handler in this process: the instance's own API, which forwards
// to the leader when this instance does not lead. The answer streams
// through a pipe, so long polls and followed logs work as over a socket.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RemoteAddr = "127.0.0.1:0" // in process: loopback, as a local client
	in.RequestURI = in.URL.RequestURI()
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() { _ = pw.Close() }()
		t.h.ServeHTTP(w, in)
		w.WriteHeader(http.StatusOK)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: pr, ContentLength: -1, Request: req,
	}, nil
}

// pipeWriter is the http.ResponseWriter of handlerTransport: the status
// and headers at the first write, then the body into the pipe.
type pipeWriter struct {
	header http.Header
	sent   http.Header
	status int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush sends the status and headers; the body is unbuffered.
func (w *pipeWriter) Flush() { w.WriteHeader(http.StatusOK) }
