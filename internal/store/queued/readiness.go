package queued

import "sync"

// Readiness is a store's Ready channel (store.Queueing): closed while no
// recorded Write waits for the Applier, the disk is not syncing and a
// concurrent Applier has a transaction slot free. A batch formed while
// the disk works, or while every slot is taken, would wait for the next
// fsync or the next free slot anyway, and gathering more commands into
// it costs their answers nothing and saves a commit; a batch formed
// while the Applier runs the previous one overlaps the caller's work
// with the store's. The Applier and the driver's syncer (SQLite's)
// report their state changes. ChannelUnlessSyncing is the same without
// the fsync (store.SyncGathering).
type Readiness struct {
	mu       sync.Mutex
	ch       chan struct{}
	unsynced chan struct{} // as ch, but for the fsync (ChannelUnlessSyncing)
	waiting  int           // recorded Writes waiting for the Applier
	syncing  bool          // an fsync runs
	full     bool          // every transaction slot of a concurrent Applier is taken
}

// NewReadiness returns a Readiness that is ready.
func NewReadiness() *Readiness {
	r := &Readiness{ch: make(chan struct{}), unsynced: make(chan struct{})}
	close(r.ch)
	close(r.unsynced)
	return r
}

// Channel is closed while the store is ready for the next Write.
func (r *Readiness) Channel() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ch
}

// ChannelUnlessSyncing is closed while the store would be ready for the
// next Write but for an fsync running: no recorded Write waits for the
// Applier and a transaction slot is free.
func (r *Readiness) ChannelUnlessSyncing() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unsynced
}

func (r *Readiness) setWaiting(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = n
	r.update()
}

// SetSyncing reports that an fsync began (on) or ended.
func (r *Readiness) SetSyncing(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncing = on
	r.update()
}

// setFull reports that every slot of a concurrent Applier is taken (on),
// or that one is free.
func (r *Readiness) setFull(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.full == on {
		return
	}
	r.full = on
	r.update()
}

// update opens or closes the channels to match the state; the caller
// holds mu.
func (r *Readiness) update() {
	free := r.waiting == 0 && !r.full // ready, but for a running fsync
	r.ch = match(r.ch, free && !r.syncing)
	r.unsynced = match(r.unsynced, free)
}

// match returns a channel that is closed if ready is set and open if
// not: ch itself when it already is, else ch closed or a new channel.
func match(ch chan struct{}, ready bool) chan struct{} {
	closed := isClosed(ch)
	switch {
	case ready && !closed:
		close(ch)
	case !ready && closed:
		return make(chan struct{})
	}
	return ch
}

// isClosed reports whether ch is closed; a nil ch is not.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
