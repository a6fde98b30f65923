package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

var ctx = context.Background()

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openTemp(t) })
}

// Servers starting together on a fresh database migrate it once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.URL(t)
	if cur, latest, err := SchemaStatus(ctx, url); err != nil || cur != 0 || latest != LatestVersion() || latest < 2 {
		t.Fatalf("fresh schema: %d of %d (%v)", cur, latest, err)
	}
	var wg sync.WaitGroup
	applied := make([]int, 4)
	errs := make([]error, 4)
	for i := range applied {
		wg.Add(1)
		go func() { defer wg.Done(); applied[i], errs[i] = Migrate(ctx, url) }()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Fatalf("migrate %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if total != LatestVersion() {
		t.Errorf("%d migrations applied in all, want %d (each once)", total, LatestVersion())
	}
	if cur, latest, err := SchemaStatus(ctx, url); err != nil || cur != latest {
		t.Errorf("after: %d of %d (%v)", cur, latest, err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestOpenRefusesWhatIsNotAPostgresURL(t *testing.T) {
	for _, u := range []string{"", "sqlite:///tmp/x.db", "mysql://u@h/db", "postgres://h:notaport/db"} {
		if _, err := Open(ctx, u); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// A fence that refuses makes the write commit nothing.
func TestAFenceThatRefusesCommitsNothing(t *testing.T) {
	url := pgtest.URL(t)
	deposed := errors.New("deposed")
	refuse := false
	s, err := Open(ctx, url, WithFence(func(ctx context.Context, tx Tx) error {
		if refuse {
			return deposed
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	job := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
	if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, job) }); err != nil {
		t.Fatal(err)
	}
	refuse = true
	job.ID = "b"
	if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, job) }); !errors.Is(err, deposed) {
		t.Fatalf("write under a refusing fence: %v", err)
	}
	if _, err := s.JobGet(ctx, "b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the fenced-off job was stored: %v", err)
	}
}
