package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Stream names one of the child's output streams.
type Stream int

// The child's output streams.
const (
	Stdout Stream = iota + 1
	Stderr
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return fmt.Sprintf("Stream(%d)", int(s))
}

// Output receives the child's output as it arrives.
//
// Calls are serialised (never concurrent, across both streams), each stream's
// chunks arrive in order, and no call happens after Run returns. A chunk is at
// most MaxChunk bytes and ends at a newline unless the line is longer than
// MaxChunk, the stream ended, or a partial line sat unfinished for
// PartialFlushDelay (so prompts and progress bars still show up). p is only
// valid during the call: copy it to keep it. Write should not block for long:
// while it runs, the child may block on a full pipe.
type Output interface {
	Write(stream Stream, p []byte)
}

// OutputFunc adapts a function to Output.
type OutputFunc func(stream Stream, p []byte)

// Write calls f.
func (f OutputFunc) Write(stream Stream, p []byte) { f(stream, p) }

// Chunking parameters, see Output.
const (
	MaxChunk          = 64 << 10
	PartialFlushDelay = 100 * time.Millisecond
	readSize          = 32 << 10
)

// sink serialises calls to the Output.
type sink struct {
	mu  sync.Mutex
	out Output
}

func (s *sink) write(stream Stream, p []byte) {
	if s.out == nil || len(p) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.Write(stream, p)
}

// streamReader copies one pipe to the sink, cutting chunks at newlines.
type streamReader struct {
	f            *os.File
	stream       Stream
	sink         *sink
	pending      []byte // bytes read but not yet delivered: no newline among them
	pendingSince time.Time
	done         chan struct{}
}

func newStreamReader(f *os.File, stream Stream, s *sink) *streamReader {
	return &streamReader{f: f, stream: stream, sink: s, done: make(chan struct{})}
}

// run reads until EOF or until the pipe is closed under it (see abort).
func (r *streamReader) run() {
	defer close(r.done)
	buf := make([]byte, readSize)
	for {
		r.armFlushDeadline()
		n, err := r.f.Read(buf)
		r.add(buf[:n])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			r.flush()
			continue
		}
		if err != nil { // io.EOF, or os.ErrClosed after abort
			r.flush()
			return
		}
	}
}

// armFlushDeadline makes Read return when a partial line has waited for
// PartialFlushDelay, so that it can be delivered.
func (r *streamReader) armFlushDeadline() {
	var deadline time.Time
	if len(r.pending) > 0 {
		deadline = r.pendingSince.Add(PartialFlushDelay)
	}
	_ = r.f.SetReadDeadline(deadline) // fails only once the file is closed; Read reports that
}

// add appends p and delivers the complete lines in pending.
func (r *streamReader) add(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(r.pending) == 0 {
		r.pendingSince = time.Now()
	}
	r.pending = append(r.pending, p...)
	for len(r.pending) > 0 {
		cut := chunkEnd(r.pending)
		if cut == 0 {
			return
		}
		r.emit(cut)
	}
}

// chunkEnd returns the length of the next chunk to deliver from b, or 0 if b
// holds only a partial line that fits in a chunk.
func chunkEnd(b []byte) int {
	window := b[:min(len(b), MaxChunk)]
	if i := bytes.LastIndexByte(window, '\n'); i >= 0 {
		return i + 1
	}
	if len(b) >= MaxChunk {
		return MaxChunk
	}
	return 0
}

// emit delivers pending[:n] and keeps the rest.
func (r *streamReader) emit(n int) {
	r.sink.write(r.stream, r.pending[:n])
	r.pending = append(r.pending[:0], r.pending[n:]...)
	r.pendingSince = time.Now()
}

// flush delivers everything pending, partial line included.
func (r *streamReader) flush() {
	if len(r.pending) > 0 {
		r.emit(len(r.pending))
	}
}

// outputPipes are the two pipes from the child to the runner.
type outputPipes struct {
	readers       []*streamReader
	stdoutW       *os.File
	stderrW       *os.File
	readEnds      []*os.File
	allDone       chan struct{}
	closeOnceRead sync.Once
}

func openOutputPipes(s *sink) (*outputPipes, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	return &outputPipes{
		readers:  []*streamReader{newStreamReader(outR, Stdout, s), newStreamReader(errR, Stderr, s)},
		stdoutW:  outW,
		stderrW:  errW,
		readEnds: []*os.File{outR, errR},
		allDone:  make(chan struct{}),
	}, nil
}

// closeWriteEnds closes the runner's copies of the write ends, after the
// child has inherited them (or failed to start), so that EOF can happen.
func (o *outputPipes) closeWriteEnds() { closeAll(o.stdoutW, o.stderrW) }

// closeReadEnds closes the read ends; a blocked Read returns os.ErrClosed.
func (o *outputPipes) closeReadEnds() { o.closeOnceRead.Do(func() { closeAll(o.readEnds...) }) }

// start launches the readers; allDone is closed when both reached EOF.
func (o *outputPipes) start() {
	for _, r := range o.readers {
		go r.run()
	}
	go func() {
		for _, r := range o.readers {
			<-r.done
		}
		close(o.allDone)
	}()
}

// drain waits up to d for both readers to reach EOF, then cuts them off.
// It reports whether output was cut off, and returns only once no reader
// goroutine is left.
func (o *outputPipes) drain(d time.Duration) (cut bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-o.allDone:
	case <-t.C:
		cut = true
	}
	o.closeReadEnds()
	<-o.allDone
	return cut
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close() // pipe ends: nothing to flush, nothing to report
	}
}
