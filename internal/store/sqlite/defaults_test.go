package sqlite

import (
	"testing"

	"github.com/fairwayhq/fairway/internal/store/sqlstore"
)

// The batched inserts leave out the columns a row holds at their default
// (package sqlstore, shapes.go): what they take for each column's default
// is the schema's.
func TestInsertDefaultsAreTheSchemas(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	for _, table := range []string{"jobs", "job_specs", "executions"} {
		rows, err := s.RDB.QueryContext(t.Context(), `SELECT name, "notnull", dflt_value FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		schema := map[string]string{}
		for rows.Next() {
			var name string
			var notNull bool
			var dflt *string
			if err := rows.Scan(&name, &notNull, &dflt); err != nil {
				t.Fatal(err)
			}
			switch {
			case !notNull && dflt == nil:
				schema[name] = "null"
			case notNull && dflt == nil:
				schema[name] = "required"
			case notNull && (*dflt == "0" || *dflt == "''" || *dflt == "FALSE"):
				schema[name] = "zero"
			default:
				schema[name] = "other: " + *dflt
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
