package server

import (
	"context"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// addReasons sets the Reason of every job in jobs that waits: the code of
// explain, asked of the engine for the whole page in one dispatcher call.
func (s *Server) addReasons(ctx context.Context, jobs []api.Job) error {
	var waiting []int
	for i, j := range jobs {
		if waits(j.State) {
			waiting = append(waiting, i)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	ids := make([]string, len(waiting))
	for k, i := range waiting {
		ids[k] = jobs[i].ID
	}
	reasons, err := s.d.Reasons(ctx, ids)
	if err != nil {
		return err
	}
	for _, i := range waiting {
		jobs[i].Reason = reasons[jobs[i].ID]
	}
	return nil
}

func waits(state string) bool {
	return state == api.StateBlocked || state == api.StatePending || state == api.StateRetryWait
}

// reasons returns the engine's reason code for each job of ids that it
// still holds and that is not leased or running.
func (d *dispatcher) reasons(ids []string, now time.Time) map[string]string {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		rec := d.jobs[id]
		if rec == nil || rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
			continue
		}
		if code, err := d.eng.Reason(id, now); err == nil {
			out[id] = string(code)
		}
	}
	return out
}
