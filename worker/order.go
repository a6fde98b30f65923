package worker

import (
	"sync/atomic"

	"github.com/fairwayhq/fairway/api"
)

// startGate orders the starts of one lease answer. The server lists a
// worker's leases in the order it admitted them, best score first, but
// goroutines start in no particular order: without a gate a low-priority
// job leased together with a high-priority one often starts first.
type startGate struct {
	wait <-chan struct{} // closed once the earlier priority levels have started; nil: no wait
	done func()          // called once the attempt has started; nil: nobody waits for it
}

// startGates splits leases into runs of equal priority, in their order, and
// makes each run wait until every attempt of the runs before it has
// started. It returns nil when all leases share one priority (nothing to
// order), so a batch of one priority costs nothing.
func startGates(leases []api.Lease) []startGate {
	uniform := true
	for _, l := range leases[min(1, len(leases)):] {
		if l.Job.Priority != leases[0].Job.Priority {
			uniform = false
			break
		}
	}
	if uniform {
		return nil
	}
	gates := make([]startGate, len(leases))
	var prev <-chan struct{}
	for i := 0; i < len(leases); {
		j := i + 1
		for j < len(leases) && leases[j].Job.Priority == leases[i].Job.Priority {
			j++
		}
		if j == len(leases) {
			for k := i; k < j; k++ {
				gates[k] = startGate{wait: prev}
			}
			break
		}
		started := make(chan struct{})
		var left atomic.Int64
		left.Store(int64(j - i))
		done := func() {
			if left.Add(-1) == 0 {
				close(started)
			}
		}
		for k := i; k < j; k++ {
			gates[k] = startGate{wait: prev, done: done}
		}
		prev = started
		i = j
	}
	return gates
}

// await waits at the gate until the earlier priority levels have started
// (or until the attempt's context ends, so that nothing waits forever).
func (g startGate) await(t *task) {
	if g.wait != nil {
		select {
		case <-g.wait:
		case <-t.ctx.Done():
		}
	}
}

// started counts this attempt as started; once its whole level has, the
// attempts behind the gate go on. The caller calls it after the attempt's
// start is recorded, with nothing left to do but call the handler (invoke),
// so that a later level neither starts nor begins its handler before it.
func (g startGate) started() {
	if g.done != nil {
		g.done()
	}
}
