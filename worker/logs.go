package worker

import (
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
)

// Log shipping limits.
const (
	logFlushBytes  = 64 << 10  // buffered bytes that trigger a flush
	maxLogChunk    = 64 << 10  // bytes of one chunk
	maxLogRequest  = 768 << 10 // JSON-encoded bytes of one request (the server takes 1 MiB)
	maxLogBuffer   = 16 << 20  // buffered bytes beyond which output is dropped
	maxFlushRounds = 16        // requests per flush, so that a flood cannot hold it forever
	chunkOverhead  = 160       // JSON bytes of a chunk besides its data
)

// logEntry is one chunk waiting to be sent.
type logEntry struct {
	t     *task
	chunk api.LogChunk // Data is set from data when sent
	data  []byte
}

// logShipper buffers the output of every running job and sends it in
// batches. Consecutive writes to the same stream of a job share a chunk (up
// to 64 KiB); seq counts a job attempt's chunks from 1, both streams
// together, so it orders them.
type logShipper struct {
	mu      sync.Mutex
	pending []*logEntry
	bytes   int
	lost    int           // bytes dropped because the buffer was full
	kick    chan struct{} // the buffer became non-empty
	full    chan struct{} // logFlushBytes are buffered
	sendMu  sync.Mutex    // one flush at a time, so chunks leave in order
}

func newLogShipper() *logShipper {
	return &logShipper{kick: make(chan struct{}, 1), full: make(chan struct{}, 1)}
}

// logWriter is the io.Writer of one stream of one task.
type logWriter struct {
	s      *logShipper
	t      *task
	stream string
}

func (lw logWriter) Write(p []byte) (int, error) {
	lw.s.write(lw.t, lw.stream, p)
	return len(p), nil
}

func (s *logShipper) write(t *task, stream string, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.logsClosed || len(p) == 0 {
		return
	}
	if s.bytes+len(p) > maxLogBuffer {
		s.lost += len(p)
		return
	}
	wasEmpty := len(s.pending) == 0
	for len(p) > 0 {
		p = s.appendData(t, stream, p)
	}
	if wasEmpty {
		signal(s.kick)
	}
	if s.bytes >= logFlushBytes {
		signal(s.full)
	}
}

// appendData adds what fits of p to the task's open chunk, or to a new one,
// and returns the rest. Chunks are cut between UTF-8 characters.
func (s *logShipper) appendData(t *task, stream string, p []byte) []byte {
	e := t.openLog
	if e == nil || e.chunk.Stream != stream || len(e.data) >= maxLogChunk {
		e = s.newEntry(t, stream)
	}
	n := utf8Cut(p, maxLogChunk-len(e.data))
	if n == 0 { // the next character does not fit: close this chunk
		t.openLog = nil
		return p
	}
	e.data = append(e.data, p[:n]...)
	s.bytes += n
	return p[n:]
}

func (s *logShipper) newEntry(t *task, stream string) *logEntry {
	t.logSeq++
	e := &logEntry{t: t, chunk: api.LogChunk{
		JobID: t.key.jobID, Attempt: t.key.attempt, Stream: stream, Seq: t.logSeq, At: time.Now().UTC(),
	}}
	s.pending = append(s.pending, e)
	t.openLog = e
	return e
}

// utf8Cut returns how many bytes of p to take to fill room bytes without
// splitting a UTF-8 sequence (unless p is not UTF-8 there).
func utf8Cut(p []byte, room int) int {
	if len(p) <= room {
		return len(p)
	}
	for i := room; i >= 0 && i > room-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			return i
		}
	}
	return room
}

// close makes later writes of the task's handler no-ops.
func (s *logShipper) close(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.logsClosed = true
	t.openLog = nil
}

// take removes the chunks for one request, dropping those of revoked
// tasks. more says whether chunks are left.
func (s *logShipper) take() (batch []*logEntry, lost int, more bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size, n := 0, 0
	for ; n < len(s.pending); n++ {
		e := s.pending[n]
		cost := chunkOverhead + jsonLen(e.data)
		if len(batch) > 0 && size+cost > maxLogRequest {
			break
		}
		s.bytes -= len(e.data)
		if e.t.openLog == e {
			e.t.openLog = nil
		}
		if !e.t.isDropped() {
			batch = append(batch, e)
			size += cost
		}
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
	lost, s.lost = s.lost, 0
	return batch, lost, len(s.pending) > 0
}

// jsonLen is the length of b as a JSON string's contents, as encoding/json
// writes it (HTML characters escaped, invalid UTF-8 replaced).
func jsonLen(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '"' || r == '\\' || r == '\b' || r == '\f' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		b = b[size:]
	}
	return n
}

// logLoop flushes the buffer LogFlushInterval after it became non-empty,
// or as soon as it holds 64 KiB.
func (w *Worker) logLoop(ctx context.Context) {
	s := w.logs
	for {
		select {
		case <-s.kick:
		case <-ctx.Done():
			return
		}
		if !waitFlush(ctx, w.opts.LogFlushInterval, s.full) {
			return
		}
		w.flushLogs(ctx)
	}
}

func waitFlush(ctx context.Context, d time.Duration, full <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-full:
	case <-ctx.Done():
		return false
	}
	return true
}

// flushLogs sends what is buffered. Flushes are serialised, so that chunks
// reach the server in the order they were written.
func (w *Worker) flushLogs(ctx context.Context) {
	s := w.logs
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	for range maxFlushRounds {
		batch, lost, more := s.take()
		if lost > 0 {
			w.log.Warn("job output dropped: log buffer full", "bytes", lost)
		}
		for _, group := range groupBy(batch, entryGen) {
			w.sendLogs(ctx, group)
		}
		if !more {
			return
		}
	}
}

func entryGen(e *logEntry) uint64 { return e.t.sess.gen }

// sendLogs sends one session's chunks, retrying transient failures. A
// refused request is split by job, so that one stale attempt does not
// lose the others' output.
func (w *Worker) sendLogs(ctx context.Context, batch []*logEntry) {
	sess := batch[0].t.sess
	chunks := logChunks(batch)
	err := w.retry(ctx, "log upload", func() error {
		return w.call(ctx, func(ctx context.Context) error {
			_, err := w.client.AppendLogs(ctx, sess.id, chunks)
			return err
		})
	})
	jobs := groupBy(batch, entryTask)
	switch {
	case err == nil || ctx.Err() != nil:
	case classify(err) == errGone:
		w.sessionLost(sess.gen)
	case len(jobs) > 1:
		for _, job := range jobs {
			w.sendLogs(ctx, job)
		}
	default:
		w.log.Info("job output refused", "job", batch[0].t.key.jobID, "attempt", batch[0].t.key.attempt, "err", err)
	}
}

func logChunks(batch []*logEntry) []api.LogChunk {
	out := make([]api.LogChunk, len(batch))
	for i, e := range batch {
		out[i] = e.chunk
		out[i].Data = string(e.data)
	}
	return out
}

func entryTask(e *logEntry) *task { return e.t }

// signal does a non-blocking send on a channel of capacity 1.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
