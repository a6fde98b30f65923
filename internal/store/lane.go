package store

import (
	"fmt"
	"time"
)

// LaneState is an operator's setting of a lane that outlives the server:
// whether it is paused (a paused lane leases nothing; its running jobs
// finish), with the note and who changed it when.
type LaneState struct {
	Lane      string
	Paused    bool
	Note      string
	ChangedAt time.Time
	ChangedBy string
}

// Validate checks the lane name and the time.
func (l *LaneState) Validate() error {
	switch {
	case l.Lane == "":
		return fmt.Errorf("%w: lane state: empty lane", ErrInvalid)
	case l.ChangedAt.IsZero():
		return fmt.Errorf("%w: lane state %s: zero changed_at", ErrInvalid, l.Lane)
	}
	return nil
}
