package postgres

import (
	"database/sql"
	"testing"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// The batched inserts leave out the columns a row holds at their default
// (package sqlstore, shapes.go): what they take for each column's default
// is the schema's.
func TestInsertDefaultsAreTheSchemas(t *testing.T) {
	_, db := openWithDB(t)
	for _, table := range []string{"jobs", "job_specs", "executions"} {
		rows, err := db.QueryContext(ctx, `SELECT column_name, is_nullable = 'NO', column_default
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table)
		if err != nil {
			t.Fatal(err)
		}
		schema := map[string]string{}
		for rows.Next() {
			var name string
			var notNull bool
			var dflt sql.NullString
			if err := rows.Scan(&name, &notNull, &dflt); err != nil {
				t.Fatal(err)
			}
			switch d := dflt.String; {
			case !notNull && !dflt.Valid:
				schema[name] = "null"
			case notNull && !dflt.Valid:
				schema[name] = "required"
			case notNull && (d == "0" || d == "''::text" || d == "false"):
				schema[name] = "zero"
			default:
				schema[name] = "other: " + d
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		for col, want := range sqlstore.InsertDefaults(table) {
			if schema[col] != want {
				t.Errorf("%s.%s: the insert takes its default for %q, the schema's is %q", table, col, want, schema[col])
			}
		}
	}
}
