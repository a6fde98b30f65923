package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
)

func testTask(id string) *task {
	return newTask(context.Background(), session{id: "w", gen: 1}, api.Lease{Job: api.Job{ID: id}, Attempt: 2})
}

func TestLogWritesShareChunksPerStream(t *testing.T) {
	s := newLogShipper()
	tk := testTask("j")
	out := logWriter{s: s, t: tk, stream: "stdout"}
	errw := logWriter{s: s, t: tk, stream: "stderr"}
	for _, w := range []struct {
		lw   logWriter
		data string
	}{{out, "a"}, {out, "b\n"}, {errw, "e\n"}, {out, "c\n"}} {
		if _, err := w.lw.Write([]byte(w.data)); err != nil {
			t.Fatal(err)
		}
	}
	batch, _, more := s.take()
	got := logChunks(batch)
	want := []struct {
		stream, data string
		seq          int64
	}{{"stdout", "ab\n", 1}, {"stderr", "e\n", 2}, {"stdout", "c\n", 3}}
	if more || len(got) != len(want) {
		t.Fatalf("chunks = %+v (more %v)", got, more)
	}
	for i, w := range want {
		if got[i].Stream != w.stream || got[i].Data != w.data || got[i].Seq != w.seq || got[i].Attempt != 2 || got[i].JobID != "j" {
			t.Errorf("chunk %d = %+v, want %+v", i, got[i], w)
		}
	}
	_, _ = out.Write([]byte("d"))
	batch, _, _ = s.take()
	if c := logChunks(batch); len(c) != 1 || c[0].Seq != 4 {
		t.Errorf("after a flush, a write opens chunk 4: %+v", c)
	}
	s.close(tk)
	_, _ = out.Write([]byte("late"))
	if batch, _, _ := s.take(); len(batch) != 0 {
		t.Errorf("write after close was kept: %+v", logChunks(batch))
	}
}

func TestLogChunksSplitBetweenCharacters(t *testing.T) {
	s := newLogShipper()
	tk := testTask("j")
	data := []byte(strings.Repeat("é", 100<<10)) // 2 bytes each: 200 KiB
	_, _ = logWriter{s: s, t: tk, stream: "stdout"}.Write(data)
	var joined []byte
	var seq int64
	for {
		batch, _, more := s.take()
		for _, c := range logChunks(batch) {
			if len(c.Data) > maxLogChunk || !utf8.ValidString(c.Data) || c.Seq != seq+1 {
				t.Fatalf("chunk seq %d of %d bytes (valid UTF-8: %v), after seq %d", c.Seq, len(c.Data), utf8.ValidString(c.Data), seq)
			}
			seq = c.Seq
			joined = append(joined, c.Data...)
		}
		if !more {
			break
		}
	}
	if !bytes.Equal(joined, data) {
		t.Errorf("data changed: %d bytes back of %d", len(joined), len(data))
	}
}

func TestAFastWriterWaitsForItsOwnBufferOnly(t *testing.T) {
	s := newLogShipper()
	flood, quiet := testTask("flood"), testTask("quiet")
	written := make(chan struct{})
	go func() {
		_, _ = logWriter{s: s, t: flood, stream: "stdout"}.Write(make([]byte, 3*maxJobBuffer))
		close(written)
	}()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return flood.logBuffered >= maxJobBuffer })
	for i := range 100 { // the neighbour never waits and loses nothing
		_, _ = logWriter{s: s, t: quiet, stream: "stdout"}.Write([]byte(fmt.Sprintf("line %d\n", i)))
	}
	got := map[string]int{}
	for {
		select {
		case <-written:
		default:
		}
		batch, lost, _ := s.take()
		if lost != 0 {
			t.Fatalf("%d bytes dropped", lost)
		}
		for _, e := range batch {
			got[e.t.key.jobID] += len(e.data)
		}
		if got["flood"] == 3*maxJobBuffer {
			break
		}
		if len(batch) == 0 {
			time.Sleep(time.Millisecond) // the writer goroutine refills the buffer
		}
	}
	<-written
	want := 0
	for i := range 100 {
		want += len(fmt.Sprintf("line %d\n", i))
	}
	if got["quiet"] != want {
		t.Errorf("quiet job: %d bytes shipped, want %d", got["quiet"], want)
	}
}

func TestWritesWaitingForRoomDropOnceTheShipperStops(t *testing.T) {
	s := newLogShipper()
	tk := testTask("j")
	done := make(chan struct{})
	go func() {
		_, _ = logWriter{s: s, t: tk, stream: "stdout"}.Write(make([]byte, maxJobBuffer+100))
		close(done)
	}()
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return tk.logBuffered >= maxJobBuffer })
	s.stop()
	<-done
	if _, lost, _ := s.take(); lost != 100 {
		t.Errorf("lost = %d, want 100", lost)
	}
}

func TestOutputPastTheLimitKeepsHeadAndTailWithAMarker(t *testing.T) {
	s := newLogShipper()
	tk := newTask(context.Background(), session{id: "w", gen: 1}, api.Lease{Job: api.Job{ID: "j", OutputLimitBytes: 1000}, Attempt: 1})
	out := logWriter{s: s, t: tk, stream: "stdout"}
	errw := logWriter{s: s, t: tk, stream: "stderr"}
	var all strings.Builder
	for i := range 300 { // 300 lines of 10 bytes: 3000 bytes
		line := fmt.Sprintf("line %04d\n", i)
		all.WriteString(line)
		w := out
		if i%7 == 0 {
			w = errw
		}
		_, _ = w.Write([]byte(line))
	}
	dropped := s.close(tk)
	var stdout, stderr, joined strings.Builder
	batch, _, _ := s.take()
	for _, c := range logChunks(batch) {
		joined.WriteString(c.Data)
		if c.Stream == "stdout" {
			stdout.WriteString(c.Data)
		} else {
			stderr.WriteString(c.Data)
		}
	}
	if dropped != 2000 {
		t.Errorf("dropped = %d, want 2000", dropped)
	}
	text := all.String()
	marker := "\n[fairway: 2000 bytes of output dropped here: the job's output limit is 1000 bytes; the first 500 and the last 500 are kept]\n"
	if want := text[:500] + marker + text[2500:]; joined.String() != want {
		t.Errorf("log =\n%s\nwant\n%s", joined.String(), want)
	}
	if !strings.Contains(stderr.String(), "2000 bytes of output dropped") || strings.Contains(stdout.String(), "[fairway") {
		t.Errorf("the marker belongs on stderr: stdout %q", stdout.String())
	}
}

func TestTailNeverStartsInsideACharacter(t *testing.T) {
	s := newLogShipper()
	tk := newTask(context.Background(), session{id: "w", gen: 1}, api.Lease{Job: api.Job{ID: "j", OutputLimitBytes: 4096}, Attempt: 1})
	_, _ = logWriter{s: s, t: tk, stream: "stdout"}.Write([]byte(strings.Repeat("€", 5000))) // 3 bytes each
	s.close(tk)
	batch, _, _ := s.take()
	for _, c := range logChunks(batch) {
		if !utf8.ValidString(c.Data) {
			t.Fatalf("chunk %d is not UTF-8: %q...", c.Seq, c.Data[:min(len(c.Data), 12)])
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestJSONLenMatchesEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\t", "\r", "\b", "\x1f", "\x00", "<", "&", "é", "€", "\u2028", "\xff", "\xe2\x82"}
	for range 2000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		enc, err := json.Marshal(b.String())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := jsonLen([]byte(b.String())), len(enc)-2; got != want {
			t.Fatalf("jsonLen(%q) = %d, encoder wrote %d", b.String(), got, want)
		}
	}
}

func TestBackoffIsCappedAndJittered(t *testing.T) {
	b := backoff{min: 10 * time.Millisecond, max: 80 * time.Millisecond}
	for n := range 50 {
		d := b.delay(n, nil)
		hi := min(b.min<<min(n, 10), b.max)
		if d < hi/2 || d > hi {
			t.Fatalf("delay(%d) = %v, want within [%v, %v]", n, d, hi/2, hi)
		}
	}
	if d := b.delay(0, &api.Error{Status: 503, RetryAfter: 1}); d != b.max {
		t.Errorf("Retry-After beyond the cap: delay = %v, want the cap %v", d, b.max)
	}
}
