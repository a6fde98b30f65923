package dispatch

import (
	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// arrivals gives the best priority the jobs bring into each lane.
func arrivals(jobs []store.Job) []arrival {
	var out []arrival
next:
	for _, j := range jobs {
		for i := range out {
			if out[i].lane == j.Lane {
				out[i].priority = max(out[i].priority, j.Priority)
				continue next
			}
		}
		out = append(out, arrival{lane: j.Lane, priority: j.Priority})
	}
	return out
}

// addWaiter returns a channel that receives the job once it is terminal;
// a job not in the index is already terminal and answered from the store.
func (d *Dispatcher) addWaiter(id string) chan api.Job {
	ch := make(chan api.Job, 1)
	if _, ok := d.jobs[id]; !ok {
		close(ch)
		return ch
	}
	d.waiters[id] = append(d.waiters[id], ch)
	return ch
}

func (d *Dispatcher) removeWaiter(id string, ch chan api.Job) {
	ws := d.waiters[id]
	for i, w := range ws {
		if w == ch {
			d.waiters[id] = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(d.waiters[id]) == 0 {
		delete(d.waiters, id)
	}
}
