package client_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// Through the client: a spec whose unique rule matches answers the job
// that holds it, with the rule; SubmitBatch too, within the batch; a bad
// rule is an *api.Error naming the field.
func TestServerUniqueJobs(t *testing.T) {
	c := startServer(t)
	ctx := bounded(t)
	spec := api.JobSpec{Type: "reindex", Key: "repo-1", Command: []string{"true"},
		Unique: &api.UniqueRule{By: []string{"type", "key"}}}
	first, err := c.Submit(ctx, spec)
	if err != nil || first.Deduplicated {
		t.Fatalf("first: %+v, %v", first, err)
	}
	again, err := c.Submit(ctx, spec)
	if err != nil || !again.Deduplicated || again.Job.ID != first.Job.ID || again.UniqueMatch == nil || again.UniqueMatch.JobID != first.Job.ID {
		t.Fatalf("again: %+v, %v", again, err)
	}
	other := spec
	other.Key = "repo-2"
	batch, err := c.SubmitBatch(ctx, []api.JobSpec{other, other, spec})
	if err != nil {
		t.Fatal(err)
	}
	r := batch.Jobs
	if len(r) != 3 || r[0].Deduplicated || !r[1].Deduplicated || r[1].Job.ID != r[0].Job.ID || r[2].Job.ID != first.Job.ID {
		t.Fatalf("batch: %+v", r)
	}
	bad := spec
	bad.Unique = &api.UniqueRule{By: []string{"colour"}}
	_, err = c.Submit(ctx, bad)
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || apiErr.Field != "unique.by[0]" {
		t.Fatalf("bad rule: %v", err)
	}
}
