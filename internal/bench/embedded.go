package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/embedded"
)

// --embedded: the same workloads on fairway embedded in this process
// (package embedded): the same store, dispatcher and worker (package
// worker), but the producers submit and the workers lease, heartbeat and
// complete by calling the dispatcher directly, with no HTTP and no JSON,
// as River's producers and workers call their database in process. On
// PostgreSQL the embedded instance leads one term, fenced by it, as the
// server's instance does.

// producer is how the producers submit: the HTTP client, or the embedded
// handle.
type producer interface {
	Submit(ctx context.Context, spec api.JobSpec) (api.SubmitResponse, error)
	SubmitBatch(ctx context.Context, specs []api.JobSpec) (api.BatchResponse, error)
}

// transportInfo names how the workers and producers reach the server,
// for the config line.
func (f *fairwaySystem) transportInfo() string {
	if f.opts.Embedded {
		return "in_process"
	}
	if f.opts.NoKeys {
		return "http:loopback,submit_keys:none"
	}
	return "http:loopback"
}

// startEmbedded opens fairway embedded on the run's data directory (or on
// a fresh PostgreSQL schema) and waits until it leads.
func (f *fairwaySystem) startEmbedded(ctx context.Context, dir string) (r *fairwayRun, err error) {
	r = &fairwayRun{dir: dir}
	defer func() {
		if err != nil {
			_ = r.close()
		}
	}()
	store := dir
	if f.opts.Store != "" {
		if store, err = resetBenchSchema(ctx, f.opts.Store); err != nil {
			return r, err
		}
	}
	opts := embedded.Options{Store: store, Logger: f.log}
	if f.opts.LeaderTTL > 0 {
		// Only what config.Default() differs in from an empty file, and the TTL.
		opts.Config = fmt.Appendf(nil, "server:\n  allow_unknown_types: true\n  leader_ttl: %s\n", f.opts.LeaderTTL)
	}
	if r.fw, err = embedded.Open(ctx, opts); err != nil {
		return r, err
	}
	deadline := time.Now().Add(leadTimeout)
	for !r.fw.Leading() {
		if time.Now().After(deadline) {
			return r, fmt.Errorf("the embedded instance did not lead within %s", leadTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.cl, r.prod = r.fw.Client(), r.fw
	return r, nil
}
