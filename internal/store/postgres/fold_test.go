package postgres

import (
	"database/sql"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

// A transition of a job whose insert is held in the same Write is
// applied to the held row: the row is the one an insert and an UPDATE
// leave, and no UPDATE runs (counted by a trigger), with the rows passed
// as VALUES lists and as arrays.
func TestFoldedRows(t *testing.T) {
	for _, arrays := range []bool{false, true} {
		t.Run(map[bool]string{false: "values", true: "arrays"}[arrays], func(t *testing.T) {
			storetest.CheckFoldedRows(t, func(t *testing.T, fold bool) (store.Store, *sql.DB) {
				url := pgtest.URL(t)
				s, err := Open(ctx, url, func(o *options) {
					o.noFold = !fold
					if arrays {
						o.arrayMinRows = 1
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return s, pgtest.Open(t, url)
			}, []string{
				`CREATE TABLE fold_updates (n bigint NOT NULL)`,
				`INSERT INTO fold_updates VALUES (0)`,
				`CREATE FUNCTION fold_count() RETURNS trigger LANGUAGE plpgsql AS $$
					BEGIN UPDATE fold_updates SET n = n + 1; RETURN NULL; END $$`,
				`CREATE TRIGGER fold_count AFTER UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION fold_count()`,
			})
		})
	}
}
