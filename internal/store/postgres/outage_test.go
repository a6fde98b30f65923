package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairwayhq/fairway/internal/faultproxy"
	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// A connection that breaks while COMMIT runs leaves the outcome unknown:
// the Write fails with store.ErrMaybeApplied (which the server answers
// 503 maybe_applied), not an unnamed error.
func TestAConnectionLostDuringCommitIsMaybeApplied(t *testing.T) {
	base := pgtest.URL(t)
	proxy, proxied := faultproxy.StartFor(t, base)
	s, err := Open(ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := pgtest.Open(t, base)
	// A deferred constraint trigger runs at COMMIT: it holds the commit
	// long enough for the connection to be cut under it.
	if _, err := db.ExecContext(ctx, `
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON jobs
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		proxy.Cut()
	}()
	job := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
	err = s.Write(ctx, func(w store.Writer) error { return w.JobInsertBatched(ctx, job) })
	if !errors.Is(err, store.ErrMaybeApplied) {
		t.Fatalf("a write whose COMMIT lost its connection: %v, want store.ErrMaybeApplied", err)
	}
	t.Logf("answered: %v", err)
	select {
	case <-s.Broken():
	default:
		t.Error("the store is not Broken after its writer connection failed")
	}
}

// Errors of the connection are named ErrUnavailable, whatever pgx wraps.
func TestConnectionFailuresAreUnavailable(t *testing.T) {
	for _, err := range []error{io.ErrUnexpectedEOF, io.EOF, &net.OpError{Op: "read", Err: errors.New("reset")}} {
		if !errors.Is(unavailable(err), store.ErrUnavailable) {
			t.Errorf("unavailable(%v) is not ErrUnavailable", err)
		}
		if !errors.Is(ambiguous(unavailable(err)), store.ErrMaybeApplied) {
			t.Errorf("a commit that failed with %v is not ErrMaybeApplied", err)
		}
	}
	for _, code := range []string{"53300", "57P01", "08006"} {
		if !errors.Is(unavailable(&pgconn.PgError{Code: code}), store.ErrUnavailable) {
			t.Errorf("SQLSTATE %s is not ErrUnavailable", code)
		}
	}
	if errors.Is(unavailable(&pgconn.PgError{Code: "23505"}), store.ErrUnavailable) {
		t.Error("a unique violation is ErrUnavailable")
	}
	if errors.Is(unavailable(errors.New("syntax")), store.ErrUnavailable) {
		t.Error("an error that is not the connection's is ErrUnavailable")
	}
}

// A database that goes silent (packets held, nothing closed) fails a
// write within the statement timeout, as maybe applied (its COMMIT was
// sent), instead of holding the writer until the network gives up.
func TestASilentDatabaseFailsAWriteWithinTheStatementTimeout(t *testing.T) {
	proxy, proxied := faultproxy.StartFor(t, pgtest.URL(t))
	s, err := Open(ctx, proxied, WithStatementTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	proxy.Blackhole()
	done := make(chan error, 1)
	go func() {
		job := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
		done <- s.Write(ctx, func(w store.Writer) error { return w.JobInsertBatched(ctx, job) })
	}()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrMaybeApplied) {
			t.Errorf("a write to a silent database: %v, want store.ErrMaybeApplied", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write to a silent database still waits after 30 s")
	}
	// The store is Broken: the next write does not wait for the dead
	// connection again, and says nothing was sent.
	s.Resume() // as the dispatcher does once it has rebuilt its state
	job := store.Job{ID: "b", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
	err = s.Write(ctx, func(w store.Writer) error { return w.JobInsertBatched(ctx, job) })
	var eb errBroken
	if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrMaybeApplied) || !errors.As(err, &eb) {
		t.Errorf("a write after the store broke: %v, want ErrUnavailable from errBroken, not maybe applied", err)
	}
}

// A store's lifetime (a leader's term) ends its round trips at once: a
// write waiting on a silent database is given up when the lifetime ends,
// long before the statement timeout.
func TestTheLifetimeEndsAWriteWaitingOnASilentDatabase(t *testing.T) {
	proxy, proxied := faultproxy.StartFor(t, pgtest.URL(t))
	life, end := context.WithCancel(context.Background())
	s, err := Open(ctx, proxied, WithStatementTimeout(10*time.Minute), WithLifetime(life))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	proxy.Blackhole()
	done := make(chan error, 1)
	go func() {
		job := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
		done <- s.Write(ctx, func(w store.Writer) error { return w.JobInsertBatched(ctx, job) })
	}()
	time.Sleep(200 * time.Millisecond)
	end()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrMaybeApplied) && !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("a write given up at the end of the lifetime: %v, want maybe applied or unavailable", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write to a silent database still waits 30 s after its store's lifetime ended")
	}
}

// The end of the lifetime also ends a statement that runs at once on the
// writer connection (not pipelined: an idempotency claim, a log append),
// which has no deadline of its own: the writer connections are closed,
// and the write fails as unavailable (its COMMIT was never sent).
func TestTheLifetimeEndsAStatementWaitingOnASilentDatabase(t *testing.T) {
	proxy, proxied := faultproxy.StartFor(t, pgtest.URL(t))
	life, end := context.WithCancel(context.Background())
	s, err := Open(ctx, proxied, WithStatementTimeout(10*time.Minute), WithLifetime(life))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		done <- s.Write(ctx, func(w store.Writer) error {
			first := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0, IdempotencyKey: "k1"}
			if err := w.JobInsert(ctx, first); err != nil {
				return err
			}
			proxy.Blackhole() // the next statement runs at once, on a silent connection
			second := store.Job{ID: "b", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0, IdempotencyKey: "k2"}
			return w.JobInsert(ctx, second)
		})
	}()
	time.Sleep(300 * time.Millisecond)
	end()
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrMaybeApplied) {
			t.Errorf("a write given up at the end of the lifetime before its COMMIT: %v, want unavailable, not maybe applied", err)
		}
		t.Logf("answered: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("a statement on a silent database still waits 30 s after its store's lifetime ended")
	}
	select {
	case <-s.Broken():
	default:
		t.Error("the store is not Broken after its lifetime ended")
	}
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Error("Close still waits 10 s after the lifetime ended")
	}
}
