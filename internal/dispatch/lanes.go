package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// PauseLane pauses (paused true) or resumes a lane, as River pauses a
// queue: a paused lane leases nothing, its jobs keep their place and
// explain says lane_paused, its running jobs finish. The state is stored
// (lane_states) and outlives a restart or a change of leader; a
// lane_paused or lane_resumed event records who did it, with the note.
// The result is api.ResultPaused, ResultAlreadyPaused, ResultResumed or
// ResultNotPaused; *UnknownLaneError for a lane the configuration lacks.
func (d *Dispatcher) PauseLane(ctx context.Context, lane string, paused bool, note, actor string) (string, error) {
	var result string
	var opErr error
	err := d.submit(ctx, func(tx *txn) { result, opErr = d.setLanePaused(tx, lane, paused, note, actor) })
	if err != nil {
		return "", err
	}
	return result, opErr
}

func (d *Dispatcher) setLanePaused(tx *txn, lane string, paused bool, note, actor string) (string, error) {
	changed, err := d.eng.PauseLane(lane, paused)
	if errors.Is(err, policy.ErrUnknownLane) {
		return "", &UnknownLaneError{Lane: lane}
	}
	if err != nil {
		tx.fatal(fmt.Errorf("engine pause lane %s: %w", lane, err))
		return "", nil
	}
	if !changed {
		if paused {
			return api.ResultAlreadyPaused, nil
		}
		return api.ResultNotPaused, nil
	}
	st := store.LaneState{Lane: lane, Paused: paused, Note: note, ChangedAt: tx.now, ChangedBy: actor}
	if err := tx.w.LaneStateSet(tx.ctx, st); err != nil {
		tx.fatal(fmt.Errorf("store lane %s: %w", lane, err))
		return "", nil
	}
	d.laneStates[lane] = st
	typ, result := store.EventLanePaused, api.ResultPaused
	if !paused {
		typ, result = store.EventLaneResumed, api.ResultResumed
	}
	tx.event("", 0, "", typ, actor, map[string]string{"lane": lane, "note": note})
	return result, nil
}

// loadLaneStates pauses the lanes stored as paused (rebuild). A lane the
// configuration no longer defines is left out, with a warning.
func (d *Dispatcher) loadLaneStates(ctx context.Context) error {
	states, err := d.st.LaneStateList(ctx)
	if err != nil {
		return fmt.Errorf("lane states: %w", err)
	}
	d.laneStates = map[string]store.LaneState{}
	for _, st := range states {
		if !st.Paused {
			continue
		}
		if _, err := d.eng.PauseLane(st.Lane, true); err != nil {
			d.log.Warn("dispatcher: a paused lane is not in the configuration; ignored", "lane", st.Lane, "err", err)
			continue
		}
		d.laneStates[st.Lane] = st
	}
	return nil
}
