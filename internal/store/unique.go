package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// UniqueField is a job field a unique rule compares.
type UniqueField string

// The fields a unique rule may compare. Uniqueness is always within one
// tenant (a submit never returns another tenant's job), so UniqueByTenant
// is accepted and changes nothing.
const (
	UniqueByType    UniqueField = "type"
	UniqueByKey     UniqueField = "key"
	UniqueByPayload UniqueField = "payload"
	UniqueByTenant  UniqueField = "tenant"
	UniqueByLane    UniqueField = "lane"
)

// UniqueFields returns every field a unique rule may compare.
func UniqueFields() []UniqueField {
	return []UniqueField{UniqueByType, UniqueByKey, UniqueByPayload, UniqueByTenant, UniqueByLane}
}

// Valid reports whether f is one of UniqueFields.
func (f UniqueField) Valid() bool { return slices.Contains(UniqueFields(), f) }

// MaxUniquePeriod bounds a unique rule's period.
const MaxUniquePeriod = 366 * 24 * time.Hour

// UniqueRule makes a job unique among the jobs of its tenant with the same
// values of the By fields: while the job that claimed those values is in
// one of States, and (when Period > 0) was created less than Period before
// a new job, the new job is a duplicate of it. See "Unique jobs" in the
// package documentation. Stored as JSON on the job.
type UniqueRule struct {
	By     []UniqueField
	States []State
	Period time.Duration // 0: no limit
}

// uniqueJSON is UniqueRule's stored form.
type uniqueJSON struct {
	By       []UniqueField `json:"by"`
	States   []State       `json:"states"`
	PeriodMS int64         `json:"period_ms,omitempty"`
}

// MarshalJSON writes the stored form.
func (r UniqueRule) MarshalJSON() ([]byte, error) {
	return json.Marshal(uniqueJSON{By: r.By, States: r.States, PeriodMS: r.Period.Milliseconds()})
}

// UnmarshalJSON reads the stored form.
func (r *UniqueRule) UnmarshalJSON(b []byte) error {
	var u uniqueJSON
	if err := json.Unmarshal(b, &u); err != nil {
		return err
	}
	*r = UniqueRule{By: u.By, States: u.States, Period: time.Duration(u.PeriodMS) * time.Millisecond}
	return nil
}

// DefaultUniqueStates are the states a rule without states counts: every
// state of an unfinished job.
func DefaultUniqueStates() []State { return UnfinishedStates() }

// Normalize sorts and dedupes By and States (in lifecycle order),
// so that equal rules compare and hash equal.
func (r *UniqueRule) Normalize() {
	slices.Sort(r.By)
	r.By = slices.Compact(r.By)
	var states []State
	for _, s := range AllStates() {
		if slices.Contains(r.States, s) {
			states = append(states, s)
		}
	}
	r.States = states
}

// Validate checks what the drivers rely on: at least one known field,
// at least one known state, a period within [0, MaxUniquePeriod].
func (r *UniqueRule) Validate() error {
	switch {
	case len(r.By) == 0:
		return fmt.Errorf("%w: unique rule: no field to compare", ErrInvalid)
	case len(r.States) == 0:
		return fmt.Errorf("%w: unique rule: no state", ErrInvalid)
	case r.Period < 0 || r.Period > MaxUniquePeriod:
		return fmt.Errorf("%w: unique rule: period %v out of [0, %v]", ErrInvalid, r.Period, MaxUniquePeriod)
	}
	for _, f := range r.By {
		if !f.Valid() {
			return fmt.Errorf("%w: unique rule: unknown field %q", ErrInvalid, f)
		}
	}
	for _, s := range r.States {
		if !s.Valid() {
			return fmt.Errorf("%w: unique rule: unknown state %q", ErrInvalid, s)
		}
	}
	return nil
}

// Holds reports whether a claim by a job in state held, created at
// heldCreated, still binds a job created at now under r: the holder is in
// one of r's states and, with a period, younger than it.
func (r *UniqueRule) Holds(held State, heldCreated, now time.Time) bool {
	if !slices.Contains(r.States, held) {
		return false
	}
	return r.Period <= 0 || heldCreated.After(now.Add(-r.Period))
}

// UniqueHash is the claim key of j under r: a SHA-256, in hex, of the
// names and values of r's fields (the payload canonical: JSON with sorted
// object keys and no insignificant space). The tenant is not in it: the
// claim is keyed by (tenant, hash).
func (r *UniqueRule) UniqueHash(j *Job) string {
	h := sha256.New()
	h.Write([]byte("fairway-unique-v1"))
	by := slices.Clone(r.By)
	slices.Sort(by)
	for _, f := range slices.Compact(by) {
		var v []byte
		switch f {
		case UniqueByType:
			v = []byte(j.Type)
		case UniqueByKey:
			v = []byte(j.Key)
		case UniqueByLane:
			v = []byte(j.Lane)
		case UniqueByPayload:
			v = canonicalJSON(j.Payload)
		case UniqueByTenant:
			continue
		}
		writeField(h, []byte(f))
		writeField(h, v)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeField writes b length-prefixed, so that no two field lists hash
// the same bytes.
func writeField(h interface{ Write([]byte) (int, error) }, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	_, _ = h.Write(n[:])
	_, _ = h.Write(b)
}

// canonicalJSON re-encodes a JSON document with sorted object keys and
// numbers as written; what does not parse is returned as is.
func canonicalJSON(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

// UniqueError is returned by JobInsert when the job's unique rule finds a
// job that holds its claim: JobID, which stays as it was, and nothing of
// the new job is stored. errors.Is(err, ErrDuplicate) holds.
type UniqueError struct {
	Tenant string
	Hash   string
	JobID  string
}

func (e *UniqueError) Error() string {
	return fmt.Sprintf("%v: tenant %q: unique rule matches job %s", ErrDuplicate, e.Tenant, e.JobID)
}

// Is makes errors.Is(err, ErrDuplicate) true.
func (e *UniqueError) Is(target error) bool { return target == ErrDuplicate }

// InsertAnswers reports whether inserting j can answer with a duplicate
// (an idempotency key or a unique rule): such an insert runs at once, never
// held or queued for a batch.
func (j *Job) InsertAnswers() bool { return j.IdempotencyKey != "" || j.Unique != nil }
