package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// JobCursor is the position after which the next page of JobList starts:
// the (created_at, id) of the last job returned. Every driver encodes it the
// same way, so a cursor survives a change of driver.
type JobCursor struct {
	CreatedAt time.Time // microsecond precision
	ID        string
}

const cursorVersion = "j1"

// Encode returns the cursor as an opaque URL-safe string:
// base64url("j1:<created_at unix microseconds>:<id>").
func (c JobCursor) Encode() string {
	raw := cursorVersion + ":" + strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + ":" + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeJobCursor parses a cursor made by Encode; any other string gives
// ErrInvalidCursor.
func DecodeJobCursor(s string) (JobCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return JobCursor{}, fmt.Errorf("%w: %v", ErrInvalidCursor, err)
	}
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || parts[0] != cursorVersion || parts[2] == "" {
		return JobCursor{}, fmt.Errorf("%w: %q", ErrInvalidCursor, s)
	}
	us, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return JobCursor{}, fmt.Errorf("%w: %v", ErrInvalidCursor, err)
	}
	return JobCursor{CreatedAt: time.UnixMicro(us).UTC(), ID: parts[2]}, nil
}
