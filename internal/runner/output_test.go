//go:build linux

package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStdoutAndStderrSeparateAndInOrder(t *testing.T) {
	t.Parallel()
	res, rec := run(t, t.Context(), Spec{Argv: sh(
		`i=1; while [ $i -le 500 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`)})
	wantClass(t, res, ClassNone, nil)
	var wantOut, wantErr strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&wantOut, "out %d\n", i)
		fmt.Fprintf(&wantErr, "err %d\n", i)
	}
	if got := rec.String(Stdout); got != wantOut.String() {
		t.Errorf("stdout = %.80q..., want %.80q...", got, wantOut.String())
	}
	if got := rec.String(Stderr); got != wantErr.String() {
		t.Errorf("stderr = %.80q..., want %.80q...", got, wantErr.String())
	}
	for _, s := range []Stream{Stdout, Stderr} {
		for _, c := range rec.Chunks(s) {
			if !bytes.HasSuffix(c, []byte("\n")) {
				t.Fatalf("%v chunk %q does not end at a line boundary", s, c)
			}
		}
	}
}

func TestLargeOutputIntact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef012345678901234\n"), 1<<14)
	noNewline := bytes.Repeat([]byte("x"), 1<<20)
	noNewline[len(noNewline)/3] = 'y' // a marker: order and position must survive
	writeFile(t, filepath.Join(dir, "lines"), lines)
	writeFile(t, filepath.Join(dir, "flat"), noNewline)

	res, rec := run(t, t.Context(), Spec{Argv: sh(`cat lines; cat flat >&2`), Dir: dir})
	wantClass(t, res, ClassNone, nil)
	if got := rec.String(Stdout); got != string(lines) {
		t.Errorf("stdout: got %d bytes, want %d, equal=%v", len(got), len(lines), got == string(lines))
	}
	if got := rec.String(Stderr); got != string(noNewline) {
		t.Errorf("stderr: got %d bytes, want %d, equal=%v", len(got), len(noNewline), got == string(noNewline))
	}
	for _, s := range []Stream{Stdout, Stderr} {
		for _, c := range rec.Chunks(s) {
			if len(c) == 0 || len(c) > MaxChunk {
				t.Fatalf("%v chunk of %d bytes, want 1..%d", s, len(c), MaxChunk)
			}
		}
	}
}

func TestPartialLineDeliveredWhileRunning(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := newRecorder()
	rec.on(Stdout, "prompt> ", cancel) // no newline: must not wait for one
	res := Run(ctx, Spec{Argv: sh(`printf 'prompt> '; exec sleep 1000`)}, rec)
	wantClass(t, res, ClassKilled, context.Canceled)
	if got := rec.String(Stdout); got != "prompt> " {
		t.Errorf("stdout = %q, want %q", got, "prompt> ")
	}
}

func TestChunkEnd(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", MaxChunk+10)
	tests := map[string]struct {
		in   string
		want int
	}{
		"empty":                   {"", 0},
		"partial line":            {"abc", 0},
		"one line":                {"abc\n", 4},
		"lines and partial":       {"a\nb\nc", 4},
		"long line":               {long, MaxChunk},
		"newline past the window": {long + "\n", MaxChunk},
		"newline in the window":   {"ab\n" + long, 3},
	}
	for name, tc := range tests {
		if got := chunkEnd([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: chunkEnd = %d, want %d", name, got, tc.want)
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
