package server

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// TestAJobsHistoryIsTheSameWhereverItIsKept drives jobs through every kind
// of attempt (started and completed, started with the completion, failed
// and retried, cancelled while running, lease lost, handed back unrun,
// operator actions in between) and compares the events API's answers with
// testdata/attempt_history.golden, recorded from the server that stored
// every event as a row (main just before issue 29's lever 1 was merged,
// c968a1b, the start already folded into the lease): per job, the
// audit feed paged two at a time by after_id, and since. Ids, types,
// order, attempts, actors, times and details must all be the same.
func TestAJobsHistoryIsTheSameWhereverItIsKept(t *testing.T) {
	h := newHarness(t, defaultConfig())
	names := map[string]string{}
	name := func(id, as string) { names[id] = as }
	w := h.register(api.RegisterRequest{Name: "w", Slots: 4})
	name(w, "W")
	at := func(d time.Duration) *time.Time { t := h.clock.Now().Add(d); return &t }

	// A: leased, started (worker's start time), reprioritized while it
	// runs, succeeded.
	a := h.submit(api.JobSpec{Type: "t", Priority: intp(10)})
	name(a.ID, "A")
	h.clock.Advance(time.Second)
	ls := h.lease(w, 1)
	h.clock.Advance(1500 * time.Millisecond)
	h.startAt(w, a.ID, 1, at(-300*time.Millisecond))
	h.clock.Advance(time.Second)
	if code := h.do("POST", "/jobs/"+a.ID+"/reprioritize", map[string]int{"priority": 20}, nil); code != http.StatusOK {
		t.Fatalf("reprioritize: HTTP %d", code)
	}
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: a.ID, Attempt: ls[0].Attempt, Outcome: "succeeded", ExitCode: intp(0)})

	// B: fails (exit 3), retried, then started and failed in one report
	// with output dropped: the final failure.
	b := h.submit(api.JobSpec{Type: "t", MaxAttempts: 2, Retry: &api.RetryPolicy{Kind: "fixed", DelayMS: 1000}})
	name(b.ID, "B")
	h.clock.Advance(time.Second)
	h.lease(w, 1)
	h.start(w, b.ID, 1)
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: b.ID, Attempt: 1, Outcome: "failed", ExitCode: intp(3), Error: "exit 3"})
	h.clock.Advance(2 * time.Second)
	h.tick()
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: b.ID, Attempt: 2, Outcome: "failed", ExitCode: intp(4), Error: "exit 4",
		StartedAt: at(-700 * time.Millisecond), FinishedAt: at(-100 * time.Millisecond), OutputDroppedBytes: 10})

	// C: cancelled while running.
	c := h.submit(api.JobSpec{Type: "t"})
	name(c.ID, "C")
	h.clock.Advance(time.Second)
	h.lease(w, 1)
	h.start(w, c.ID, 1)
	h.clock.Advance(time.Second)
	if code := h.do("POST", "/jobs/"+c.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: HTTP %d", code)
	}
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: c.ID, Attempt: 1, Outcome: "cancelled", Error: "killed"})

	// D: leased and started on a worker that vanishes: the lease is lost,
	// the job retried, leased again (still live when the history is read).
	d := h.submit(api.JobSpec{Type: "t", MaxAttempts: 3, Retry: &api.RetryPolicy{Kind: "immediate"}})
	name(d.ID, "D")
	w2 := h.register(api.RegisterRequest{Name: "w2", Slots: 1})
	name(w2, "W2")
	h.clock.Advance(time.Second)
	h.lease(w2, 1)
	h.start(w2, d.ID, 1)
	h.clock.Advance(40 * time.Second)
	h.heartbeat(w, a.ID, 1) // keeps W alive
	h.tick()
	h.clock.Advance(time.Second)
	h.tick()
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	h.startAt(w, d.ID, 2, nil)

	// E: leased, never reported by the worker's heartbeats: handed back
	// unrun, then leased again and succeeded with the start in the report.
	e := h.submit(api.JobSpec{Type: "t"})
	name(e.ID, "E")
	h.clock.Advance(time.Second)
	h.lease(w, 1)
	h.clock.Advance(15 * time.Second)
	h.heartbeat(w, d.ID, 2)
	h.clock.Advance(time.Second)
	h.tick()
	h.lease(w, 1)
	h.clock.Advance(time.Second)
	h.complete(w, api.Completion{JobID: e.ID, Attempt: 2, Outcome: "succeeded", StartedAt: at(-500 * time.Millisecond)})

	var out strings.Builder
	for _, id := range []string{a.ID, b.ID, c.ID, d.ID, e.ID} {
		var r api.EventList
		if code := h.do("GET", "/jobs/"+id+"/events", nil, &r); code != http.StatusOK {
			t.Fatalf("events of %s: HTTP %d", names[id], code)
		}
		fmt.Fprintf(&out, "# job %s\n", names[id])
		writeEvents(&out, r.Events)
	}
	out.WriteString("# audit, two at a time\n")
	var after int64
	for {
		var r api.EventList
		if code := h.do("GET", fmt.Sprintf("/events?limit=2&after_id=%d", after), nil, &r); code != http.StatusOK {
			t.Fatalf("audit: HTTP %d", code)
		}
		writeEvents(&out, r.Events)
		if len(r.Events) == 0 || r.NextAfterID == 0 {
			break
		}
		after = r.NextAfterID
	}
	since := h.clock.Now().Add(-20 * time.Second).Format(time.RFC3339Nano)
	for _, q := range []string{"type=leased,started,succeeded,failed&limit=3", "actor=worker:" + w + "&limit=4",
		"since=" + since + "&limit=5", "job_id=" + b.ID + "&after_id=8&limit=3"} {
		var r api.EventList
		if code := h.do("GET", "/events?"+strings.ReplaceAll(q, "+", "%2B"), nil, &r); code != http.StatusOK {
			t.Fatalf("audit %s: HTTP %d", q, code)
		}
		fmt.Fprintf(&out, "# audit %s (next %d)\n", normalize(q, names), r.NextAfterID)
		writeEvents(&out, r.Events)
	}
	got := normalize(out.String(), names)
	golden := filepath.Join("testdata", "attempt_history.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("history differs from %s:\n%s", golden, lineDiff(string(want), got))
	}

	// And most of it is no event row: the submitted events are held by
	// the job rows (A's with the priority it had before the
	// reprioritize), the attempts' leased, started and worker-reported
	// outcome events by the job and execution rows; a lease handed back
	// unrun (D and E's first) left its leased event as a row.
	db, err := sql.Open("sqlite3", "file:"+h.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored []int64
	rows, err := db.Query("SELECT id FROM events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, id)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// A start reported before the completion (a start call or a
	// heartbeat: 5, 9 and 17 here) is an event row: it carries the
	// reported start in its detail, which the job row does not keep.
	submitted := []int64{3, 7, 15, 20, 24}
	synthesised := append([]int64{4, 6, 8, 11, 12, 14, 16, 19, 28, 29, 30, 31}, submitted...)
	var wantRows []int64
	for id := int64(1); id <= 31; id++ {
		if !slices.Contains(synthesised, id) {
			wantRows = append(wantRows, id)
		}
	}
	if !slices.Equal(stored, wantRows) {
		t.Errorf("event rows %v, want %v", stored, wantRows)
	}
}

func (h *harness) startAt(worker, id string, attempt int, started *time.Time) {
	h.t.Helper()
	var r api.ItemResults
	h.do("POST", "/workers/"+worker+"/start", api.StartRequest{Jobs: []api.JobAttempt{{JobID: id, Attempt: attempt, StartedAt: started}}}, &r)
}

func writeEvents(b *strings.Builder, es []api.Event) {
	for _, e := range es {
		raw, _ := json.Marshal(e)
		b.Write(raw)
		b.WriteByte('\n')
	}
}

// normalize replaces the random ids of jobs and workers by their names.
func normalize(s string, names map[string]string) string {
	for id, n := range names {
		s = strings.ReplaceAll(s, id, n)
	}
	return s
}

// lineDiff lists the lines of want and got that differ, by position.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, w, g)
		}
	}
	return b.String()
}
