package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
)

func TestMaintenanceWarnings(t *testing.T) {
	for _, tc := range []struct {
		autovacuum, trackCounts string
		want                    string // a word of the one warning; "" for none
	}{
		{"on", "on", ""},
		{"off", "on", "autovacuum is off"},
		{"off", "off", "autovacuum is off"},
		{"on", "off", "track_counts is off"},
	} {
		got := maintenanceWarnings(tc.autovacuum, tc.trackCounts)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("autovacuum=%s track_counts=%s: %q, want none", tc.autovacuum, tc.trackCounts, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("autovacuum=%s track_counts=%s: %q, want one saying %q", tc.autovacuum, tc.trackCounts, got, tc.want)
		}
	}
}

// TestMaintenanceWarningsReadTheServer: the warnings follow what the
// database server says of its settings.
func TestMaintenanceWarningsReadTheServer(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	db := pgtest.Open(t, url)
	var autovacuum, trackCounts string
	if err := db.QueryRowContext(ctx, `SHOW autovacuum`).Scan(&autovacuum); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SHOW track_counts`).Scan(&trackCounts); err != nil {
		t.Fatal(err)
	}
	got, err := MaintenanceWarnings(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if want := maintenanceWarnings(autovacuum, trackCounts); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("MaintenanceWarnings = %q, want %q (autovacuum=%s track_counts=%s)", got, want, autovacuum, trackCounts)
	}
	if _, err := MaintenanceWarnings(ctx, "mysql://nowhere"); err == nil {
		t.Error("MaintenanceWarnings accepted a URL that is not PostgreSQL's")
	}
}
