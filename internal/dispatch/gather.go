package dispatch

// Whether the gathering waits for the fsync (store.SyncGathering).
//
// On SQLite the store is not Ready while the syncer's fsync runs, so the
// dispatcher gathers commands during it: their answers would wait for the
// next fsync anyway, and one transaction for them all writes fewer pages
// than several (group commit). That pays when commands arrive during the
// fsync, as submits from independent producers do. When none arrive it
// only delays the batch: in a drain each worker's completion report is a
// batch of its own, the other reports are already in the store's
// transaction or fsync, and nothing else comes; the dispatcher's step
// then waits for the fsync and the transaction after it waits for the
// step, one stage after the other.
//
// syncWait decides from what arrived in the last waits. Each time the
// gathering waited for the fsync alone (the store ready but for it), the
// commands that arrived meanwhile update an exponentially weighted mean
// (weight 1/8 for the newest). While that mean is below
// syncWaitPaysFrom the next batch is handed over as soon as only the
// fsync holds it, except every syncWaitSample-th time, which waits, so
// that the mean keeps following the load. It starts at 1: the store
// behaves as it always did until the waits are seen to gather nothing.

const (
	// syncWaitPaysFrom is the mean number of commands arriving during an
	// fsync wait from which waiting is kept.
	syncWaitPaysFrom = 1.0
	// syncWaitSample: one skippable wait in this many still waits.
	syncWaitSample = 8
)

// syncWait holds the mean of the commands that arrived during the
// gathering's recent fsync waits. The zero value is not ready: use
// newSyncWait.
type syncWait struct {
	mean    float64
	skipped int // waits skipped since the last sampled one
}

func newSyncWait() syncWait { return syncWait{mean: 1} }

// skip reports whether the gathering should hand its batch over now,
// while only the fsync holds the store, rather than wait for it.
func (s *syncWait) skip() bool {
	if s.mean >= syncWaitPaysFrom {
		return false
	}
	s.skipped++
	if s.skipped >= syncWaitSample {
		s.skipped = 0
		return false
	}
	return true
}

// observe records the commands that arrived during a whole fsync wait.
func (s *syncWait) observe(arrived int) {
	s.mean = 0.875*s.mean + 0.125*float64(arrived)
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
