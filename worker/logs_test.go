package worker

import (
	"bytes"
	"context"
	"encoding/json"
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

func TestLogBufferBound(t *testing.T) {
	s := newLogShipper()
	tk := testTask("j")
	big := make([]byte, maxLogBuffer)
	lw := logWriter{s: s, t: tk, stream: "stdout"}
	_, _ = lw.Write(big)
	_, _ = lw.Write([]byte("overflow"))
	if s.lost != len("overflow") {
		t.Errorf("lost = %d, want %d", s.lost, len("overflow"))
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
