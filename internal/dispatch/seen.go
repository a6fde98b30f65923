package dispatch

import (
	"fmt"
	"slices"

	"github.com/fairwayhq/fairway/internal/store"
)

// The capabilities of every worker that ever registered with the store,
// gone ones included, one entry per distinct capability: what
// server.unrunnable: refuse_unseen accepts a job against while the
// workers that run it restart (each start is a new worker).

// noteSeen remembers w's capabilities.
func (d *Dispatcher) noteSeen(w store.Worker) {
	if d.seen == nil {
		d.seen = map[string]store.Worker{}
	}
	key := fmt.Sprintf("%q %q %q %d %d %d %d", w.Types, w.Labels, w.Handlers, w.Slots, w.Resources.MilliCPU, w.Resources.MemoryMB, w.Resources.GPU)
	if _, ok := d.seen[key]; !ok {
		d.seen[key] = w
	}
}

// seenCouldRun reports whether a worker seen before could run j: its
// type, its labels, and a capacity that covers its demand.
func (d *Dispatcher) seenCouldRun(j store.Job) bool {
	for _, w := range d.seen {
		if w.Slots <= 0 || (len(w.Types) > 0 && !slices.Contains(w.Types, j.Type)) || !w.Resources.Covers(j.Resources) {
			continue
		}
		if hasAll(w.Labels, j.Labels) {
			return true
		}
	}
	return false
}

// seenRunsWithoutCommand reports whether a worker seen before had a
// handler for typ (or for every type).
func (d *Dispatcher) seenRunsWithoutCommand(typ string) bool {
	for _, w := range d.seen {
		if w.Handlers == nil || slices.Contains(w.Handlers, typ) || slices.Contains(w.Handlers, "*") {
			return true
		}
	}
	return false
}

func hasAll(have, want []string) bool {
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}
