package embedded

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"

	_ "github.com/mattn/go-sqlite3" // the test's own connection to the store's file
)

// After a queued transaction fails on SQLite (here a lease whose fenced
// guard misses: the job's attempt was changed behind the dispatcher's
// back), the dispatcher rebuilds its state from the store and the store
// takes writes again: the next call succeeds and the job is leased at the
// attempt the store holds. (The store the instance opened once hid the
// driver's store.Queueing, so nothing resumed it and every later write
// was refused.)
func TestSQLiteTakesWritesAfterAFailedQueuedTransaction(t *testing.T) {
	dir := t.TempDir()
	fw := openTest(t, dir, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	sub, err := fw.Submit(ctx, api.JobSpec{Type: "resumed"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "fairway.db")+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `UPDATE jobs SET attempt = attempt + 7`); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	tr := fw.Transport()
	reg := api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"resumed"}}
	// The registration's batch leases the job and fails at its commit;
	// the dispatcher rebuilds and resumes the store meanwhile.
	var w api.RegisterResponse
	for {
		if w, err = tr.Register(ctx, reg); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("register never succeeded after the failed transaction: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		leases, err := tr.Lease(ctx, w.WorkerID, 1, time.Second)
		if err != nil {
			t.Fatalf("lease after the rebuild: %v", err)
		}
		if len(leases) == 1 {
			if leases[0].Job.ID != sub.Job.ID || leases[0].Attempt != 8 {
				t.Fatalf("leased %s attempt %d, want %s attempt 8", leases[0].Job.ID, leases[0].Attempt, sub.Job.ID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the job was never leased after the rebuild")
		}
	}
}
