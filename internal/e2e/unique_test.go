package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

// Issue 30 item 1: unique jobs on PostgreSQL with two server processes.
// 50 concurrent submits of one unique rule, half through the leader and
// half through the standby (which forwards them), make exactly one job;
// every submit answers that job. A worker process then runs it once; once
// it has ended, the rule binds no longer and the CLI's submit makes a new
// job, and the CLI's second submit says which rule matched.
func TestUniqueJobsAcrossTwoInstancesOnPostgres(t *testing.T) {
	h := newHACluster(t, 2)
	lead, _ := h.leader(0, 30*time.Second)
	witness := filepath.Join(t.TempDir(), "witness")
	spec := api.JobSpec{Type: "reindex", Key: "repo-1",
		Command: []string{"sh", "-c", "echo \"$FAIRWAY_JOB_ID\" >> " + witness},
		Unique:  &api.UniqueRule{By: []string{"type", "key"}, States: []string{"pending", "leased", "running"}}}

	var clients []*client.Client
	for _, url := range []string{h.urlsFrom(lead)[0], h.urlsFrom(1 - lead)[0]} {
		c, err := client.New(url)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 50
	answers := make([]api.SubmitResponse, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	startLine := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startLine
			answers[i], errs[i] = clients[i%2].Submit(ctx, spec)
		}()
	}
	close(startLine)
	wg.Wait()
	created := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("submit %d: %v", i, errs[i])
		}
		if answers[i].Job.ID != answers[0].Job.ID {
			t.Fatalf("submit %d answered job %s, submit 0 job %s", i, answers[i].Job.ID, answers[0].Job.ID)
		}
		if !answers[i].Deduplicated {
			created++
		} else if m := answers[i].UniqueMatch; m == nil || m.JobID != answers[0].Job.ID {
			t.Fatalf("submit %d: deduplicated without the rule that matched: %+v", i, m)
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d submits created a job, want 1", created, n)
	}
	list, err := clients[1].List(ctx, client.ListOptions{Type: "reindex"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Jobs) != 1 || list.Jobs[0].Unique == nil {
		t.Fatalf("%d jobs stored (want 1, with its rule): %+v", len(list.Jobs), list.Jobs)
	}
	first := answers[0].Job.ID

	start(t, "w1", "worker", "--server", h.urls(), "--name", "w1", "--slots", "2")
	eventually(t, 60*time.Second, "the unique job to succeed", func() bool {
		j, err := clients[0].Get(ctx, first)
		return err == nil && j.Job.State == api.StateSucceeded
	})
	if b, err := os.ReadFile(witness); err != nil || strings.TrimSpace(string(b)) != first {
		t.Fatalf("witness %q (%v), want job %s once", b, err, first)
	}

	// The job ended: the CLI's submit (through the standby) makes a new one,
	// and its second submit is answered with it, saying which rule matched.
	args := []string{"reindex", "--key", "repo-1", "--unique-by", "type,key", "--unique-states", "pending,leased,running",
		"--unique-period", "10m", "--", "sleep", "60"}
	second := submitID(t, h.urlsFrom(1 - lead)[0], args...)
	if second == first {
		t.Fatalf("a submit after the job ended answered it again")
	}
	code, out := runCLI(t, h.urlsFrom(lead)[0], append([]string{"submit"}, args...)...)
	if code != 0 || !strings.HasPrefix(out, "fairway: unique rule (by key,type, states pending,leased,running) matched job "+second) ||
		!strings.Contains(out, "\n"+second+"\n") {
		t.Fatalf("duplicate CLI submit: exit %d\n%s", code, out)
	}
}
