package store

import (
	"crypto/rand"
	"sync"
	"time"
)

// crockford is the ULID alphabet: Crockford's base32, no I L O U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDGenerator makes ULIDs: 26 characters, a 48-bit millisecond timestamp
// then 80 random bits, so that ids sort by creation time. Ids from one
// generator strictly increase: within a millisecond (or when the clock goes
// back) the random part of the previous id is incremented instead of drawn.
// The zero value is ready to use and safe for concurrent use.
type IDGenerator struct {
	mu     sync.Mutex
	lastMs uint64
	last   [10]byte
}

var defaultIDs IDGenerator

// NewID returns a new id for a job created at now, from a process-wide
// IDGenerator.
func NewID(now time.Time) string { return defaultIDs.New(now) }

// New returns the next id for time now.
func (g *IDGenerator) New(now time.Time) string {
	ms := uint64(max(now.UnixMilli(), 0)) & (1<<48 - 1)
	g.mu.Lock()
	if ms <= g.lastMs && g.lastMs != 0 {
		ms = g.lastMs
		if !increment(&g.last) {
			ms++ // 2^80 ids in one millisecond: borrow the next one
			_, _ = rand.Read(g.last[:])
		}
	} else {
		_, _ = rand.Read(g.last[:]) // never fails (crypto/rand since Go 1.24)
	}
	g.lastMs = ms
	var b [16]byte
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	copy(b[6:], g.last[:])
	g.mu.Unlock()
	return encodeULID(b)
}

// increment adds one to the big-endian number r, reporting false on
// overflow.
func increment(r *[10]byte) bool {
	for i := len(r) - 1; i >= 0; i-- {
		r[i]++
		if r[i] != 0 {
			return true
		}
	}
	return false
}

// encodeULID writes 128 bits as 26 base32 characters, 5 bits each, the
// first character carrying the top 3 bits.
func encodeULID(b [16]byte) string {
	var out [26]byte
	// Walk the 130-bit field (2 leading zero bits + 128) 5 bits at a time.
	var acc uint32
	bits := 2 // leading zero bits already "in" acc
	pos := 0
	for _, x := range b {
		acc = acc<<8 | uint32(x)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[pos] = crockford[(acc>>bits)&31]
			pos++
		}
	}
	return string(out[:])
}

// IDTime returns the creation time encoded in an id made by NewID, and false
// if id is not such an id.
func IDTime(id string) (time.Time, bool) {
	if len(id) != 26 {
		return time.Time{}, false
	}
	var ms uint64
	for i := range 10 {
		v := decodeCrockford(id[i])
		if v < 0 || (i == 0 && v > 7) {
			return time.Time{}, false
		}
		ms = ms<<5 | uint64(v)
	}
	for i := 10; i < 26; i++ {
		if decodeCrockford(id[i]) < 0 {
			return time.Time{}, false
		}
	}
	return time.UnixMilli(int64(ms)).UTC(), true
}

func decodeCrockford(c byte) int {
	for i := range len(crockford) {
		if crockford[i] == c {
			return i
		}
	}
	return -1
}
