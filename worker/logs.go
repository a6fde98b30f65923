package worker

import (
	"context"
	"fmt"
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
	maxJobBuffer   = 1 << 20   // a job's buffered bytes beyond which its writes wait
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
//
// Each job has its own bound (maxJobBuffer): a write that would pass it
// waits until a flush has taken the job's earlier chunks, so a job that
// writes faster than the server takes its output is slowed down (its pipe
// fills and the process blocks) while its neighbours' output flows. Nothing
// is dropped for want of buffer space; what the job's output limit keeps
// out is dropped from the middle (see outputCap) and marked in the log.
type logShipper struct {
	mu      sync.Mutex
	room    *sync.Cond // signalled when chunks were taken, a task closed or the shipper stopped
	pending []*logEntry
	bytes   int
	lost    int           // bytes dropped because the shipper had stopped
	stopped bool          // no more flushes: writes are dropped rather than wait
	kick    chan struct{} // the buffer became non-empty
	full    chan struct{} // logFlushBytes are buffered
	sendMu  sync.Mutex    // one flush at a time, so chunks leave in order
}

func newLogShipper() *logShipper {
	s := &logShipper{kick: make(chan struct{}, 1), full: make(chan struct{}, 1)}
	s.room = sync.NewCond(&s.mu)
	return s
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

// write buffers p: the part within the head of the job's output limit as
// chunks to send, waiting for room in the job's buffer; the rest in the
// tail kept until the job ends.
func (s *logShipper) write(t *task, stream string, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > 0 && !t.logsClosed {
		head := t.out.headRoom()
		if head == 0 {
			t.out.keepTail(stream, p)
			return
		}
		if !s.waitRoom(t) {
			if !t.logsClosed {
				s.lost += len(p)
			}
			return
		}
		// The buffer bound is soft by a character, so that n is 0 only
		// when the head has less room left than the next character.
		n := utf8Cut(p, min(head, max(maxJobBuffer-t.logBuffered, utf8.UTFMax)))
		if n == 0 { // a character straddles the head's end: the tail takes it
			t.out.endHead()
			continue
		}
		s.enqueue(t, stream, p[:n])
		t.out.headSent += int64(n)
		p = p[n:]
	}
}

// waitRoom waits until the task's buffer has room; false means the task's
// log closed or the shipper stopped meanwhile.
func (s *logShipper) waitRoom(t *task) bool {
	for t.logBuffered >= maxJobBuffer && !t.logsClosed && !s.stopped {
		s.room.Wait()
	}
	return !t.logsClosed && !s.stopped
}

// enqueue adds p to the task's chunks, first marking a gap left by output
// the server refused, and wakes the flusher.
func (s *logShipper) enqueue(t *task, stream string, p []byte) {
	wasEmpty := len(s.pending) == 0
	if t.logGap > 0 {
		gap := t.logGap
		t.logGap = 0
		s.enqueue(t, "stderr", []byte(fmt.Sprintf("\n[fairway: %d bytes of output lost here: the server refused them]\n", gap)))
	}
	for len(p) > 0 {
		p = s.appendData(t, stream, p)
	}
	if wasEmpty && len(s.pending) > 0 {
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
	t.logBuffered += n
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

// close ends the task's output: what the output limit dropped is marked
// on stderr, the kept tail follows, and later writes of the task's handler
// are no-ops. It returns the number of bytes dropped.
func (s *logShipper) close(t *task) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.logsClosed {
		return 0
	}
	dropped := t.out.dropped
	if dropped > 0 {
		s.enqueue(t, "stderr", []byte(t.out.marker()))
	}
	for _, seg := range t.out.tail {
		s.enqueue(t, seg.stream, seg.data)
	}
	t.out.tail = nil
	t.logsClosed = true
	t.openLog = nil
	s.room.Broadcast()
	return dropped
}

// stop makes writes that would wait drop their data instead: nothing will
// take the buffer any more.
func (s *logShipper) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.room.Broadcast()
}

// refused records that the server refused these chunks of a job: the next
// output of the job starts with a marker naming the gap.
func (s *logShipper) refused(batch []*logEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range batch {
		e.t.logGap += int64(len(e.data))
	}
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
		e.t.logBuffered -= len(e.data)
		if e.t.openLog == e {
			e.t.openLog = nil
		}
		if !e.t.isDropped() {
			batch = append(batch, e)
			size += cost
		}
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
	if n > 0 {
		s.room.Broadcast()
	}
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
	defer s.stop()
	for {
		select {
		case <-s.kick:
		case <-ctx.Done():
			return
		}
		if !waitFlush(ctx, w.opts.LogFlushInterval, s.full) {
			return
		}
		if w.flushLogs(ctx) {
			signal(s.kick) // a flood outlasted the rounds: go on after this pause
		}
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

// flushLogs sends what is buffered and reports whether some is left after
// maxFlushRounds requests. Flushes are serialised, so that chunks reach
// the server in the order they were written.
func (w *Worker) flushLogs(ctx context.Context) (more bool) {
	s := w.logs
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	for range maxFlushRounds {
		var batch []*logEntry
		var lost int
		batch, lost, more = s.take()
		if lost > 0 {
			w.log.Warn("job output dropped: the worker is stopping", "bytes", lost)
		}
		for _, group := range groupBy(batch, entryGen) {
			w.sendLogs(ctx, group)
		}
		if !more {
			return false
		}
	}
	return true
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
	case classify(err) == errStale:
		w.log.Info("job output refused: the attempt is over", "job", batch[0].t.key.jobID, "attempt", batch[0].t.key.attempt)
	default:
		w.log.Warn("job output refused", "job", batch[0].t.key.jobID, "attempt", batch[0].t.key.attempt, "err", err)
		w.logs.refused(batch)
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
