package server

import (
	"net/http"

	"github.com/fairwayhq/fairway/api"
)

// Pausing a lane (package dispatch, PauseLane): admin keys only, since a
// lane is shared by every tenant.

// maxPauseNote bounds a pause note.
const maxPauseNote = 1000

func (s *Server) handleLanePause(w http.ResponseWriter, r *http.Request, p principal) error {
	var req api.PauseLaneRequest
	if err := decodeOptional(w, r, maxBody, &req); err != nil {
		return err
	}
	if len(req.Note) > maxPauseNote {
		return badField("note", "must be at most %d bytes, got %d", maxPauseNote, len(req.Note))
	}
	return s.laneAction(w, r, p, true, req.Note)
}

func (s *Server) handleLaneResume(w http.ResponseWriter, r *http.Request, p principal) error {
	return s.laneAction(w, r, p, false, "")
}

func (s *Server) laneAction(w http.ResponseWriter, r *http.Request, p principal, paused bool, note string) error {
	if err := p.adminOnly("pause or resume a lane (it is shared by every tenant)"); err != nil {
		return err
	}
	name := r.PathValue("name")
	result, err := s.d.PauseLane(r.Context(), name, paused, note, p.name())
	if err != nil {
		return err
	}
	lanes, err := s.d.Lanes(r.Context(), "")
	if err != nil {
		return err
	}
	out := api.LaneActionResponse{Result: result}
	for _, l := range lanes.Lanes {
		if l.Name == name {
			out.Lane = l
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
