package server

import (
	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
)

// resolveMaxSnoozes takes the job's max_snoozes, else server.max_snoozes.
func (s *Server) resolveMaxSnoozes(j *store.Job, spec api.JobSpec, _ config.Type) *fieldError {
	if spec.MaxSnoozes < 0 || spec.MaxSnoozes > config.MaxSnoozesCap {
		return badField("max_snoozes", "must be between 0 (server.max_snoozes, %d) and %d, got %d",
			s.cfg.Server.SnoozeCap(), config.MaxSnoozesCap, spec.MaxSnoozes)
	}
	j.MaxSnoozes = s.cfg.Server.SnoozeCap()
	if spec.MaxSnoozes > 0 {
		j.MaxSnoozes = spec.MaxSnoozes
	}
	return nil
}
