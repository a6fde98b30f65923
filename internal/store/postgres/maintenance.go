package postgres

import (
	"context"
	"fmt"
)

// MaintenanceWarnings returns what, in the database server's settings,
// leaves fairway's tables to grow without bound, one sentence each (none
// when the settings are sound). fairway updates a job's row at every
// transition and deletes finished jobs at retention: the dead row
// versions that leaves are reclaimed by VACUUM, which autovacuum runs;
// without it the tables and their indexes only grow, and the planner's
// statistics go stale. Autovacuum also needs track_counts, which tells
// it which tables changed. The server logs these at startup.
func MaintenanceWarnings(ctx context.Context, url string) ([]string, error) {
	if err := checkURL(url); err != nil {
		return nil, err
	}
	db, err := OpenDB(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	defer db.Close()
	var autovacuum, trackCounts string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('autovacuum'), current_setting('track_counts')`).Scan(&autovacuum, &trackCounts); err != nil {
		return nil, fmt.Errorf("postgres: read settings: %w", unavailable(err))
	}
	return maintenanceWarnings(autovacuum, trackCounts), nil
}

// maintenanceWarnings is MaintenanceWarnings on the settings' values.
func maintenanceWarnings(autovacuum, trackCounts string) []string {
	var out []string
	switch {
	case autovacuum == "off":
		out = append(out, "PostgreSQL's autovacuum is off: the row versions left by job updates and deletions are never reclaimed and the planner's statistics go stale; turn it on (autovacuum = on) or run VACUUM (ANALYZE) on fairway's tables regularly")
	case trackCounts == "off":
		out = append(out, "PostgreSQL's track_counts is off, so autovacuum never sees fairway's tables change: turn it on (track_counts = on) or run VACUUM (ANALYZE) on fairway's tables regularly")
	}
	return out
}
