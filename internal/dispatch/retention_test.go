package dispatch

import (
	"testing"
	"time"
)

// The jobs' purge chunk halves after a slow chunk, down to a floor, and
// grows back after quick ones, up to purgeChunk.
func TestPurgeChunkAdaptsToHowLongAChunkTakes(t *testing.T) {
	chunk := purgeChunk
	for range 10 {
		chunk = nextPurgeChunk(chunk, 3*purgeSlow)
	}
	if chunk != purgeMinChunk {
		t.Fatalf("after slow chunks: %d, want the floor %d", chunk, purgeMinChunk)
	}
	if got := nextPurgeChunk(chunk, purgeSlow/2); got != chunk {
		t.Fatalf("after a middling chunk: %d, want it kept at %d", got, chunk)
	}
	for range 10 {
		chunk = nextPurgeChunk(chunk, time.Millisecond)
	}
	if chunk != purgeChunk {
		t.Fatalf("after quick chunks: %d, want %d", chunk, purgeChunk)
	}
}
