package policy

import "fmt"

// SetWorkerOffline takes a worker's free capacity out of placement
// (offline true), or gives it back: nothing new is admitted on an
// offline worker, while the jobs running on it stay running and return
// their capacity as they finish. It is for a worker that has stopped
// calling in but is not declared lost yet. It reports whether the state
// changed.
func (e *Engine) SetWorkerOffline(id string, offline bool) (bool, error) {
	w, ok := e.workers[id]
	if !ok {
		return false, fmt.Errorf("%w: %s", ErrUnknownWorker, id)
	}
	if w.offline == offline {
		return false, nil
	}
	w.offline = offline
	if offline {
		e.free -= w.freeSlots
	} else {
		e.free += w.freeSlots
	}
	e.gen++
	return true, nil
}
