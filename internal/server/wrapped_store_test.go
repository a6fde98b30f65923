package server

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// startWrapped starts a server on a fresh SQLite file seen through wrap
// (a test's store wrapper that counts, holds or interferes with writes),
// on a fake clock, and stops both at the end of the test. Cleanups the
// caller adds after it run before the server stops.
func startWrapped(t *testing.T, wrap func(*sqlite.Store) store.Store) (*harness, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	srv, err := New(Options{Store: wrap(sq), Config: defaultConfig(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: clock, srv: srv, http: httptest.NewServer(srv.Handler())}
	t.Cleanup(func() { h.stop(); sq.Close() })
	return h, sq
}
