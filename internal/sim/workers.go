package sim

import (
	"fmt"

	"github.com/fairwayhq/fairway/internal/policy"
)

// compileWorkers expands pool (a single worker named "pool" unless named)
// or the workers list; exactly one of them must be given.
func compileWorkers(pool *WorkerSpec, list []WorkerSpec) ([]policy.Worker, error) {
	switch {
	case pool != nil && len(list) > 0:
		return nil, fieldErr("pool", "give either pool or workers, not both")
	case pool != nil:
		p := *pool
		if p.Name == "" {
			p.Name = "pool"
		}
		return expandWorker("pool", p, nil, map[string]string{})
	case len(list) == 0:
		return nil, fieldErr("pool", "required: give pool: {slots: N} or a workers list")
	}
	var out []policy.Worker
	seen := map[string]string{}
	for i, w := range list {
		var err error
		if out, err = expandWorker(fmt.Sprintf("workers[%d]", i), w, out, seen); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expandWorker appends the Count workers w describes. A name without a
// placeholder gets "-{i}" appended when Count > 1.
func expandWorker(field string, w WorkerSpec, out []policy.Worker, seen map[string]string) ([]policy.Worker, error) {
	if w.Name == "" {
		return nil, fieldErr(field+".name", "required")
	}
	count, slots, res, err := workerShape(field, w)
	if err != nil {
		return nil, err
	}
	name := w.Name
	if count > 1 && !containsPlaceholder(name) {
		name += "-{i}"
	}
	tmpl, err := parseTemplate(name)
	if err != nil {
		return nil, fieldErr(field+".name", "%v", err)
	}
	for i := range count {
		id := tmpl.render(i)
		if prev, dup := seen[id]; dup {
			return nil, fieldErr(field+".name", "worker %q already defined by %s", id, prev)
		}
		seen[id] = field
		out = append(out, policy.Worker{ID: id, Types: w.Types, Labels: w.Labels, Slots: slots, Resources: res})
	}
	return out, nil
}

// workerShape validates a worker's count, slots and resources.
func workerShape(field string, w WorkerSpec) (count, slots int, res policy.Resources, err error) {
	count, slots = 1, 1
	if w.Count != nil {
		count = *w.Count
	}
	if count < 1 || count > 100000 {
		return 0, 0, res, fieldErr(field+".count", "must be in [1, 100000]")
	}
	if w.Slots != nil {
		slots = *w.Slots
	}
	if slots < 1 {
		return 0, 0, res, fieldErr(field+".slots", "must be >= 1")
	}
	res, err = compileResources(field, &ResourceSpec{CPU: w.CPU, MemoryMB: w.MemoryMB, GPU: w.GPU})
	return count, slots, res, err
}

func containsPlaceholder(s string) bool {
	t, err := parseTemplate(s)
	return err != nil || t.vars > 0
}
