package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

// Closing the server wakes a worker's held heartbeat at once: the answer
// is the heartbeat as it stood, not one that waits out its hold.
func TestCloseWakesHeldRequests(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.LeaseTTL = config.Duration(2 * time.Hour)
	cfg.Server.HeartbeatInterval = config.Duration(time.Hour) // the hold is wait_ms, 60 s
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	h.clock.Advance(time.Second)
	beat := h.clock.Now()
	held := map[string]chan int{"heartbeat": make(chan int, 1), "lease poll": make(chan int, 1), "submit?wait": make(chan int, 1)}
	go func() {
		held["heartbeat"] <- h.do("POST", "/workers/"+w+"/heartbeat", api.HeartbeatRequest{WaitMS: maxLeaseWait.Milliseconds()}, nil)
	}()
	// Once the dispatcher has seen the beat, the request is held.
	for {
		var ws api.WorkerList
		h.do("GET", "/workers", nil, &ws)
		if len(ws.Workers) == 1 && ws.Workers[0].LastSeenAt.Equal(beat) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// A second worker's lease long poll, and a submit that waits for its
	// job (which no worker runs: type b).
	w2 := h.register(api.RegisterRequest{Name: "w2", Types: []string{"c"}, Slots: 1})
	go func() {
		held["lease poll"] <- h.do("POST", "/workers/"+w2+"/lease", api.LeaseRequest{Max: 1, WaitMS: maxLeaseWait.Milliseconds()}, nil)
	}()
	go func() {
		held["submit?wait"] <- h.do("POST", "/jobs?wait=true&timeout_ms=60000", api.JobSpec{Type: "b", Command: []string{"true"}}, nil)
	}()
	for {
		var list api.JobList
		if h.do("GET", "/jobs", nil, &list); len(list.Jobs) == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h.srv.Close()
	for what, want := range map[string]int{"heartbeat": http.StatusOK, "lease poll": -1, "submit?wait": http.StatusAccepted} {
		select {
		case code := <-held[what]:
			if want > 0 && code != want {
				t.Errorf("held %s at close: HTTP %d, want %d", what, code, want)
			}
		case <-time.After(maxLeaseWait / 2):
			t.Fatalf("the held %s was not answered when the server closed", what)
		}
	}
}
