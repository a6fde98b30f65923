package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

func TestCLILanePauseAndResume(t *testing.T) {
	paused := api.LaneActionResponse{Lane: api.LaneInfo{Name: "batch", Queued: 7, Running: 2, Paused: true}, Result: api.ResultPaused}
	resumed := api.LaneActionResponse{Lane: api.LaneInfo{Name: "batch", Queued: 7}, Result: api.ResultResumed}
	f := newAPIFake(t, map[string]http.HandlerFunc{
		"POST /api/v1/lanes/{name}/pause":  replyWith(200, paused),
		"POST /api/v1/lanes/{name}/resume": replyWith(200, resumed),
	})
	code, out, errOut := runCmd(t, "lane", "pause", "batch", "--note", "db migration", "--server", f.URL)
	if code != 0 || out != "lane batch: paused: it leases nothing until resumed (7 queued, 2 running jobs finish)\n" || errOut != "" {
		t.Errorf("pause: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var req api.PauseLaneRequest
	if err := json.Unmarshal(f.requests()[0].Body, &req); err != nil || req.Note != "db migration" {
		t.Errorf("pause request %+v, %v", req, err)
	}
	code, out, _ = runCmd(t, "lane", "resume", "--server", f.URL, "batch")
	if code != 0 || out != "lane batch: resumed (7 queued)\n" {
		t.Errorf("resume: exit %d, stdout %q", code, out)
	}
	for _, args := range [][]string{{}, {"stop", "batch"}, {"pause"}, {"resume", "a", "b"}} {
		if code, _, _ := runCmd(t, append(append([]string{"lane"}, args...), "--server", f.URL)...); code != exitUsage {
			t.Errorf("lane %v: exit %d, want a usage error", args, code)
		}
	}
}
