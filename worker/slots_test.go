package worker

import (
	"context"
	"testing"
	"time"
)

// TestSlotPool: acquire takes what is free up to max and waits when
// nothing is; take may push the count below zero (leases that came back
// with a completion report while the lease loop held the free slots), and
// releases pay that back before anything can be acquired again.
func TestSlotPool(t *testing.T) {
	p := newSlotPool(3)
	ctx := context.Background()
	if n, ok := p.acquire(ctx, 2); !ok || n != 2 {
		t.Fatalf("acquire(2) = %d, %v", n, ok)
	}
	if n, ok := p.acquire(ctx, 5); !ok || n != 1 {
		t.Fatalf("acquire(5) with 1 free = %d, %v", n, ok)
	}
	p.take(2)
	p.release(1)
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if n, ok := p.acquire(short, 1); ok {
		t.Fatalf("acquired %d with the count at -1", n)
	}
	got := make(chan int, 1)
	go func() {
		n, _ := p.acquire(ctx, 4)
		got <- n
	}()
	p.release(1) // back to 0: still nothing to take
	p.release(2)
	select {
	case n := <-got:
		if n != 2 {
			t.Errorf("acquire after release = %d, want 2", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("acquire did not wake on release")
	}
}
