package sim

// minHeap is a binary min-heap ordered by less. The loop keeps three:
// arrival cursors, running jobs by completion time, and timers.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) len() int { return len(h.items) }

func (h *minHeap[T]) peek() T { return h.items[0] }

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	h.down(0)
	return top
}

// removeFunc drops every item for which drop is true and restores the
// heap order: O(n), for the rare removal from the middle.
func (h *minHeap[T]) removeFunc(drop func(T) bool) {
	kept := h.items[:0]
	for _, x := range h.items {
		if !drop(x) {
			kept = append(kept, x)
		}
	}
	var zero T
	for i := len(kept); i < len(h.items); i++ {
		h.items[i] = zero
	}
	h.items = kept
	for i := len(kept)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *minHeap[T]) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			m = r
		}
		if !h.less(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
