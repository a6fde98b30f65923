package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Feasible reports whether some registered worker could ever run j: one
// that takes its type, has all its labels and whose whole capacity (not
// what is free now) covers its demand. When none could, it says what is
// missing, in the units a user submits in (cpu in cores, memory in MB).
// With no worker registered it reports true: workers may still come.
func (e *Engine) Feasible(j Job) (bool, string) {
	ws := e.liveWorkers()
	if len(ws) == 0 {
		return true, ""
	}
	var typed, labelled []*worker
	for _, w := range ws {
		if w.typeSet == nil || w.typeSet[j.Type] {
			typed = append(typed, w)
		}
	}
	if len(typed) == 0 {
		return false, fmt.Sprintf("no registered worker runs type %q", j.Type)
	}
	for _, w := range typed {
		if w.supports(j.Type, j.Labels) {
			labelled = append(labelled, w)
		}
	}
	if len(labelled) == 0 {
		return false, fmt.Sprintf("no registered worker that runs type %q has the labels %s", j.Type, strings.Join(j.Labels, ","))
	}
	var most Resources
	for _, w := range labelled {
		if w.Resources.Covers(j.Resources) {
			return true, ""
		}
		most = Resources{
			MilliCPU: max(most.MilliCPU, w.Resources.MilliCPU),
			MemoryMB: max(most.MemoryMB, w.Resources.MemoryMB),
			GPU:      max(most.GPU, w.Resources.GPU),
		}
	}
	return false, shortfall(j.Resources, most)
}

// shortfall names each resource the demand asks for beyond the most any
// worker offers.
func shortfall(demand, most Resources) string {
	var parts []string
	if demand.MilliCPU > most.MilliCPU {
		parts = append(parts, fmt.Sprintf("%s cpu (the most a worker offers is %s)", cores(demand.MilliCPU), cores(most.MilliCPU)))
	}
	if demand.MemoryMB > most.MemoryMB {
		parts = append(parts, fmt.Sprintf("%d MB memory (the most a worker offers is %d MB)", demand.MemoryMB, most.MemoryMB))
	}
	if demand.GPU > most.GPU {
		parts = append(parts, fmt.Sprintf("%d gpu (the most a worker offers is %d)", demand.GPU, most.GPU))
	}
	return "no registered worker is large enough: the job asks for " + strings.Join(parts, " and ")
}

// cores spells millicores as cores: 1500 -> "1.5".
func cores(milli int64) string {
	return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64)
}

// liveWorkers returns the registered workers in id order.
func (e *Engine) liveWorkers() []*worker {
	ws := make([]*worker, 0, len(e.workers))
	for _, w := range e.workers {
		if !w.removed {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(a, b int) bool { return ws[a].ID < ws[b].ID })
	return ws
}
