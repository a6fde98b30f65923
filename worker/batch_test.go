package worker

import "testing"

// take with a minimum takes nothing from a smaller backlog, and the whole
// backlog (up to its bounds) once the minimum is there: two report loops
// that both saw a backlog cannot split it into smaller reports.
func TestTakeWaitsForItsMinimum(t *testing.T) {
	q := newBulkQueue(4)
	for range 3 {
		q.add(&task{})
	}
	if got := q.take(4, 10, 0, nil); got != nil {
		t.Fatalf("took %d of a backlog of 3 with a minimum of 4", len(got))
	}
	if n := q.len(); n != 3 {
		t.Fatalf("backlog %d after a refused take, want 3", n)
	}
	q.add(&task{})
	q.add(&task{})
	if got := q.take(4, 10, 0, nil); len(got) != 5 {
		t.Fatalf("took %d of a backlog of 5 with a minimum of 4, want 5", len(got))
	}
	if got := q.take(1, 10, 0, nil); got != nil {
		t.Fatalf("took %d from an empty queue", len(got))
	}
}
