package store

import (
	"encoding/hex"
	"time"
)

// SubmitTokenWindow is how long a submit token answers a submit sent
// again (package doc, "Submit tokens"): the dispatcher keeps the tokens of
// the jobs created in the last SubmitTokenWindow, and reads them back
// from that many minutes of the newest jobs when it rebuilds. The Go
// client stops sending a submit again well inside it.
const SubmitTokenWindow = 2 * time.Minute

// SubmitToken names a job created by a submit that carried a token.
type SubmitToken struct {
	Tenant    string
	Token     string
	JobID     string
	CreatedAt time.Time // the job's
}

// ParseSubmitToken decodes a submit token: 32 hexadecimal characters,
// 128 bits. ok is false for anything else.
func ParseSubmitToken(s string) (token [16]byte, ok bool) {
	if len(s) != 2*len(token) {
		return token, false
	}
	_, err := hex.Decode(token[:], []byte(s))
	return token, err == nil
}

// IDFloor is the smallest id NewID makes for a job created at t or later:
// every id of a job created at t or after sorts at or after it.
func IDFloor(t time.Time) string {
	ms := uint64(max(t.UnixMilli(), 0)) & (1<<48 - 1)
	var b [16]byte
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	return encodeULID(b)
}
