package policy

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// worker is a registered executor with its free capacity.
type worker struct {
	Worker
	typeSet   map[string]bool // nil: every type
	labelSet  map[string]bool
	free      Resources
	freeSlots int
	removed   bool
	offline   bool // its free capacity is out of placement (SetWorkerOffline)
	running   int
	jobs      []*entry // running on it, in no order (reserve.go reads their ends)
}

func (w *worker) addJob(en *entry) { w.jobs = append(w.jobs, en) }

func (w *worker) dropJob(en *entry) {
	for i, x := range w.jobs {
		if x == en {
			last := len(w.jobs) - 1
			w.jobs[i] = w.jobs[last]
			w.jobs[last] = nil
			w.jobs = w.jobs[:last]
			return
		}
	}
}

// versatility is the number of types a worker supports; a worker that
// takes every type counts as the most versatile of all.
func (w *worker) versatility() int {
	if w.typeSet == nil {
		return math.MaxInt
	}
	return len(w.typeSet)
}

func (w *worker) supports(typ string, labels []string) bool {
	if w.typeSet != nil && !w.typeSet[typ] {
		return false
	}
	for _, l := range labels {
		if !w.labelSet[l] {
			return false
		}
	}
	return true
}

// leftover is how much of the worker's capacity the placement would leave
// unused, summed over the resources it offers as fractions: smaller is a
// tighter fit.
func (w *worker) leftover(d Resources) float64 {
	var s float64
	if c := w.Resources.MilliCPU; c > 0 {
		s += float64(w.free.MilliCPU-d.MilliCPU) / float64(c)
	}
	if c := w.Resources.MemoryMB; c > 0 {
		s += float64(w.free.MemoryMB-d.MemoryMB) / float64(c)
	}
	if c := w.Resources.GPU; c > 0 {
		s += float64(w.free.GPU-d.GPU) / float64(c)
	}
	return s
}

// compatSet is the workers that support one (type, labels) selector, kept
// up to date as workers come and go.
type compatSet struct {
	typ     string
	labels  []string
	workers []*worker
}

// fitKey caches, once per decision, whether a (selector, shape) has a free
// worker and how many free slots could run it.
type fitKey struct {
	set   *compatSet
	shape Resources
	gen   uint64
	fits  bool
	slots int // free slots on fitting workers: n of the rarity bonus
}

func selectorKey(typ string, labels []string) string {
	if len(labels) == 0 {
		return typ
	}
	return typ + "\x00" + strings.Join(labels, "\x00")
}

func normalizeLabels(labels []string) []string {
	if len(labels) == 0 {
		return nil
	}
	out := slices.Clone(labels)
	sort.Strings(out)
	return slices.Compact(out)
}

// fit answers for the current decision generation, computing once.
func (f *fitKey) fit(gen uint64) (bool, int) {
	if f.gen == gen {
		return f.fits, f.slots
	}
	f.gen, f.fits, f.slots = gen, false, 0
	for _, w := range f.set.workers {
		if !w.offline && w.freeSlots > 0 && w.free.Covers(f.shape) {
			f.fits = true
			f.slots += w.freeSlots
		}
	}
	return f.fits, f.slots
}

// anyWorker reports whether some registered worker could ever run the
// shape, busy or not.
func (f *fitKey) anyWorker() bool {
	for _, w := range f.set.workers {
		if w.Resources.Covers(f.shape) && w.Slots > 0 {
			return true
		}
	}
	return false
}

// choose places a job: among free compatible workers that fit, the one
// supporting the fewest types, then the tightest fit, then the lowest ID.
func (f *fitKey) choose() *worker {
	var best *worker
	var bestLeft float64
	for _, w := range f.set.workers {
		if w.offline || w.freeSlots == 0 || !w.free.Covers(f.shape) {
			continue
		}
		left := w.leftover(f.shape)
		if best == nil || placementBefore(w, left, best, bestLeft) {
			best, bestLeft = w, left
		}
	}
	return best
}

func placementBefore(w *worker, left float64, b *worker, bLeft float64) bool {
	if wv, bv := w.versatility(), b.versatility(); wv != bv {
		return wv < bv
	}
	if left != bLeft {
		return left < bLeft
	}
	return w.ID < b.ID
}

// dominantShare is DRF's measure of a lane: the largest fraction of any
// pool resource (slots included) the lane holds, divided by its weight.
func dominantShare(usage Resources, slots int, capacity Resources, capSlots int, weight float64) float64 {
	var s float64
	frac := func(u, c int64) {
		if c > 0 {
			if f := float64(u) / float64(c); f > s {
				s = f
			}
		}
	}
	frac(usage.MilliCPU, capacity.MilliCPU)
	frac(usage.MemoryMB, capacity.MemoryMB)
	frac(usage.GPU, capacity.GPU)
	frac(int64(slots), int64(capSlots))
	return s / weight
}
