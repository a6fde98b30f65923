package server

import (
	"database/sql"
	"net/http"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// TestDispatcherRecoversWhenTheStoreDisagrees: when the database no longer
// holds what the dispatcher's memory says (here another process bumped a
// leased job's attempt behind its back), the transition that depends on it
// misses its guard in the store's queued transaction. The request that
// brought it gets an error and nothing of that transaction commits; the
// dispatcher rebuilds its state from the database and takes writes again
// at once, without a restart.
func TestDispatcherRecoversWhenTheStoreDisagrees(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 2})
	job := h.submit(api.JobSpec{Type: "a", MaxAttempts: 1})
	if ls := h.lease(w, 1); len(ls) != 1 || ls[0].Attempt != 1 {
		t.Fatalf("leases = %+v, want job %s at attempt 1", ls, job.ID)
	}

	db, err := sql.Open("sqlite3", "file:"+h.path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE jobs SET attempt = 7 WHERE id = ?", job.ID); err != nil {
		t.Fatal(err)
	}

	var res api.ItemResults
	code := h.do("POST", "/workers/"+w+"/complete",
		api.CompleteRequest{Results: []api.Completion{{JobID: job.ID, Attempt: 1, Outcome: "succeeded"}}}, &res)
	if code == http.StatusOK && len(res.Results) == 1 && res.Results[0].OK {
		t.Fatalf("a completion the database cannot hold was accepted: %+v", res)
	}

	next := h.submit(api.JobSpec{Type: "a"})
	if got := h.get(next.ID); got.State != "pending" && got.State != "running" {
		t.Fatalf("a job submitted after the recovery is %s", got.State)
	}
	if got := h.get(job.ID); got.Attempt != 7 || got.State != "running" {
		t.Fatalf("after the rebuild the job is %s at attempt %d, want the database's: running at 7", got.State, got.Attempt)
	}
}
