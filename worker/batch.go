package worker

import (
	"context"
	"sync"
	"time"
)

// queue is a batching queue of tasks: producers add, consumer loops take
// batches. Besides "may be non-empty" it can signal "holds at least
// bulkAt", for a consumer that only takes large batches.
type queue struct {
	mu     sync.Mutex
	items  []*task
	kick   chan struct{} // capacity 1: "the queue may be non-empty"
	bulk   chan struct{} // capacity 1: "the queue may hold bulkAt or more"
	bulkAt int           // 0: no bulk signal
}

func newQueue() *queue { return newBulkQueue(0) }

func newBulkQueue(bulkAt int) *queue {
	return &queue{kick: make(chan struct{}, 1), bulk: make(chan struct{}, 1), bulkAt: bulkAt}
}

func (q *queue) add(t *task) {
	q.mu.Lock()
	q.items = append(q.items, t)
	n := len(q.items)
	q.mu.Unlock()
	q.poked(n)
}

// addFront puts tasks back at the head, to be retried first.
func (q *queue) addFront(ts []*task) {
	if len(ts) == 0 {
		return
	}
	q.mu.Lock()
	q.items = append(ts[:len(ts):len(ts)], q.items...)
	n := len(q.items)
	q.mu.Unlock()
	q.poked(n)
}

func (q *queue) poke() { signal(q.kick) }

// poked signals the consumers of a queue now holding n tasks.
func (q *queue) poked(n int) {
	q.poke()
	if q.bulkAt > 0 && n >= q.bulkAt {
		signal(q.bulk)
	}
}

// waitBulk blocks until the queue may hold bulkAt tasks or more; false
// once ctx is done.
func (q *queue) waitBulk(ctx context.Context) bool {
	select {
	case <-q.bulk:
		return true
	case <-ctx.Done():
		return false
	}
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// take removes up to maxItems tasks from the head, and no more than
// maxBytes by size (at least one) when size is not nil, but nothing unless
// at least min tasks wait: checked under the lock that takes them, so that
// two consumers that both saw a backlog of min cannot split it into two
// smaller batches. It pokes the queue again if some are left.
func (q *queue) take(min, maxItems, maxBytes int, size func(*task) int) []*task {
	q.mu.Lock()
	if len(q.items) < min {
		q.mu.Unlock()
		return nil
	}
	n, total := 0, 0
	for n < len(q.items) && n < maxItems {
		if size != nil {
			total += size(q.items[n])
			if n > 0 && total > maxBytes {
				break
			}
		}
		n++
	}
	out := make([]*task, n)
	copy(out, q.items)
	q.items = append(q.items[:0], q.items[n:]...)
	left := len(q.items)
	q.mu.Unlock()
	if left > 0 {
		q.poked(left)
	}
	return out
}

// wait blocks until the queue may be non-empty; false once ctx is done.
func (q *queue) wait(ctx context.Context) bool {
	select {
	case <-q.kick:
		return true
	case <-ctx.Done():
		return false
	}
}

// gather waits up to window for more tasks to join the batch, returning
// early once enough is true.
func gather(ctx context.Context, window time.Duration, w *Worker, enough func() bool) {
	if window <= 0 {
		return
	}
	timer := time.NewTimer(window)
	defer timer.Stop()
	for {
		ch := w.changed()
		if enough() {
			return
		}
		select {
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// groupBy splits items by key, keeping their order inside each group.
func groupBy[T any, K comparable](items []T, key func(T) K) [][]T {
	var groups [][]T
	index := map[K]int{}
	for _, it := range items {
		k := key(it)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], it)
	}
	return groups
}

// taskGen is the registration a task was leased under: requests are
// grouped by it.
func taskGen(t *task) uint64 { return t.sess.gen }
