package server

import (
	"context"

	"github.com/fairwayhq/fairway/api"
)

// addReasons sets the Reason of every job in jobs that waits: the code of
// explain, asked of the engine for the whole page in one dispatcher call.
func (s *Server) addReasons(ctx context.Context, jobs []api.Job) error {
	if s.readOnly {
		return nil
	}
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
