package store

import (
	"fmt"
	"time"
)

// Stream names a job's output stream.
type Stream string

// Streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// LogChunk is one piece of a job's output. Seq is assigned by the worker,
// increasing per (JobID, Attempt) across both streams; appending a chunk
// whose (JobID, Attempt, Seq) exists is a no-op, so a worker may resend.
type LogChunk struct {
	JobID   string
	Attempt int
	Stream  Stream
	Seq     int64
	At      time.Time
	Data    []byte
}

// Validate checks the key and the stream.
func (c *LogChunk) Validate() error {
	switch {
	case c.JobID == "":
		return fmt.Errorf("%w: log chunk: empty job id", ErrInvalid)
	case c.Stream != Stdout && c.Stream != Stderr:
		return fmt.Errorf("%w: log chunk %s/%d/%d: unknown stream %q", ErrInvalid, c.JobID, c.Attempt, c.Seq, c.Stream)
	case c.At.IsZero():
		return fmt.Errorf("%w: log chunk %s/%d/%d: zero At", ErrInvalid, c.JobID, c.Attempt, c.Seq)
	}
	return nil
}

// LogListParams reads a job's output in (attempt, seq) order.
//
// With Attempt > 0 only that attempt is read, from seq > AfterSeq. With
// Attempt 0 every attempt is read, from the position after
// (AfterAttempt, AfterSeq); pass the last chunk's (Attempt, Seq) to resume.
type LogListParams struct {
	JobID        string
	Attempt      int
	AfterAttempt int
	AfterSeq     int64
	Stream       Stream // "" = both
	Limit        int    // 0 = DefaultLogLimit; capped at MaxLogLimit
}

// Log read limits.
const (
	DefaultLogLimit = 1000
	MaxLogLimit     = 10000
)
