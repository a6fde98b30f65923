package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// jobLog reads every chunk of a job's log, both streams in order, and the
// stdout part alone.
func jobLog(t *testing.T, cl *cluster, id string) (all, stdout string) {
	t.Helper()
	var a, o strings.Builder
	err := cl.c.LogsAll(context.Background(), id, client.LogOptions{}, func(c api.LogChunk) error {
		a.WriteString(c.Data)
		if c.Stream == "stdout" {
			o.WriteString(c.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a.String(), o.String()
}

const outputLimits = `
server:
  allow_unknown_types: true
  output_limit: 1MiB
types:
  chatty:
    output_limit: 32KiB
`

var markerRE = regexp.MustCompile(`\n\[fairway: (\d+) bytes of output dropped here: the job's output limit is (\d+) bytes; the first (\d+) and the last (\d+) are kept\]\n`)

// Item 5: a job writing far past its output limit has its head and its
// tail stored, with a marker naming the dropped middle; the limit comes
// from the job, else its type, else the server.
func TestOutputPastTheLimitKeepsHeadAndTail(t *testing.T) {
	cl := newCluster(t, outputLimits)
	cl.worker("w1", "--slots", "2")
	// seq 1 300000 writes 1,988,895 bytes.
	const total = 1988895
	cases := []struct {
		name  string
		spec  api.JobSpec
		limit int
	}{
		{"job's own limit", api.JobSpec{Type: "other", OutputLimitBytes: 64 << 10}, 64 << 10},
		{"type's limit", api.JobSpec{Type: "chatty"}, 32 << 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := c.spec
			spec.MaxAttempts = 1
			spec.Command = []string{"seq", "1", "300000"}
			job := cl.submit(spec)
			if job.OutputLimitBytes != int64(c.limit) {
				t.Fatalf("output_limit_bytes = %d, want %d", job.OutputLimitBytes, c.limit)
			}
			if done := cl.wait(job.ID, 60*time.Second); done.State != api.StateSucceeded {
				t.Fatalf("job ended %s: %s", done.State, done.LastError)
			}
			all, stdout := jobLog(t, cl, job.ID)
			m := markerRE.FindStringSubmatchIndex(all)
			if m == nil {
				t.Fatalf("no truncation marker in %d bytes of log", len(all))
			}
			dropped, _ := strconv.Atoi(all[m[2]:m[3]])
			head, tail := all[:m[0]], all[m[1]:]
			if len(head)+len(tail) > c.limit || len(head)+len(tail)+dropped != total {
				t.Errorf("head %d + tail %d + dropped %d: want <= %d kept of %d", len(head), len(tail), dropped, c.limit, total)
			}
			if !strings.HasPrefix(head, "1\n2\n3\n") || !strings.HasSuffix(tail, "\n299999\n300000\n") {
				t.Errorf("head %q... tail ...%q", head[:min(12, len(head))], tail[max(0, len(tail)-16):])
			}
			if strings.Contains(stdout, "[fairway") {
				t.Error("the marker is in the job's stdout; it belongs on stderr")
			}
			if evs := eventTypes(t, cl, job.ID); !slices.Contains(evs, "output_truncated") {
				t.Errorf("events %v lack output_truncated", evs)
			}
		})
	}
	if _, err := cl.c.Submit(context.Background(), api.JobSpec{Type: "other", OutputLimitBytes: 1 << 40, Command: []string{"true"}}); !isCode(err, api.CodeInvalidArgument) {
		t.Errorf("an output limit past server.max_output_limit: err = %v, want invalid_argument", err)
	}
}

// Item 6: a job flooding its output while a quiet neighbour on the same
// worker writes 100 lines: the flood is slowed (its own buffer waits), not
// cut, and the neighbour loses nothing.
func TestAFloodDoesNotCostItsNeighbourALine(t *testing.T) {
	cl := newCluster(t, outputLimits)
	cl.worker("w1", "--slots", "2")
	const floodBytes = 32 << 20
	flood := cl.submit(api.JobSpec{Type: "other", MaxAttempts: 1, OutputLimitBytes: 64 << 20,
		Command: []string{"sh", "-c", fmt.Sprintf("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c %d", floodBytes)}})
	quiet := cl.submit(api.JobSpec{Type: "other", MaxAttempts: 1,
		Command: []string{"sh", "-c", "i=1; while [ $i -le 100 ]; do echo quiet line $i; i=$((i+1)); done"}})
	for _, id := range []string{flood.ID, quiet.ID} {
		if done := cl.wait(id, 120*time.Second); done.State != api.StateSucceeded {
			t.Fatalf("job %s ended %s: %s", id, done.State, done.LastError)
		}
	}
	_, out := jobLog(t, cl, quiet.ID)
	var want strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&want, "quiet line %d\n", i)
	}
	if out != want.String() {
		t.Errorf("the quiet job's log has %d of its %d bytes", len(out), want.Len())
	}
	all, out := jobLog(t, cl, flood.ID)
	if len(out) != floodBytes || len(all) != floodBytes {
		t.Errorf("the flood's log has %d bytes (stdout %d), want all %d", len(all), len(out), floodBytes)
	}
}

func isCode(err error, code string) bool {
	e, ok := client.APIError(err)
	return ok && e.Code == code
}
