// Package servertest runs a real fairway server for other packages' tests:
// internal/server on a fresh SQLite file in the test's temporary directory,
// behind a loopback httptest server, all stopped when the test ends.
package servertest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/server"
	"github.com/fairwayhq/fairway/internal/store/sqlite"
)

// Start runs a server with cfg (config.Default() when nil) and returns its
// base URL.
func Start(t testing.TB, cfg *config.Config) string {
	t.Helper()
	c := config.Default()
	if cfg != nil {
		c = *cfg
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Store: st, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		_ = srv.Close()
		_ = st.Close()
	})
	return hs.URL
}
