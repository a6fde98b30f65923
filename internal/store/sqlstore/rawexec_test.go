package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

type label string

type upper string

func (u upper) Value() (driver.Value, error) { return strings.ToUpper(string(u)), nil }

type nullable struct{ s string }

func (n nullable) Value() (driver.Value, error) { return n.s, nil }

// A RawExec statement stores what database/sql stores for the same
// arguments (other integer widths, named types, Valuers, a nil pointer
// Valuer as NULL), reports the rows it changed, and refuses a wrong
// argument count as database/sql does.
func TestRawExecMatchesDatabaseSQL(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var nilValuer *nullable
	args := []any{int(7), int32(-3), uint8(9), label("tag"), upper("shout"), nilValuer, &nullable{"set"}, []byte("b"), 1.5, true, at, nil}
	for _, raw := range []bool{false, true} {
		t.Run(map[bool]string{false: "database/sql", true: "raw"}[raw], func(t *testing.T) {
			ctx := context.Background()
			db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "raw.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, `CREATE TABLE t (a, b, c, d, e, f, g, h, i, j, k, l)`); err != nil {
				t.Fatal(err)
			}
			c := &Core{D: Dialect{RawExec: raw}, WConn: conn}
			w := &Writer{s: c}
			ins, err := c.prepareWriter(`INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := w.execStmt(ins, args); err != nil || n != 1 {
				t.Fatalf("insert: %d rows, %v", n, err)
			}
			if _, err := w.execStmt(ins, args[:3]); err == nil || !strings.Contains(err.Error(), "expected 12 arguments, got 3") {
				t.Errorf("3 arguments for 12: %v", err)
			}
			upd, err := c.prepareWriter(`UPDATE t SET a = a + 1 WHERE d = ?`)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := w.execStmt(upd, []any{label("none")}); err != nil || n != 0 {
				t.Errorf("update of no row: %d rows, %v", n, err)
			}
			if n, err := w.execStmt(upd, []any{"tag"}); err != nil || n != 1 {
				t.Errorf("update of one row: %d rows, %v", n, err)
			}
			var got [12]any
			ptrs := make([]any, len(got))
			for i := range got {
				ptrs[i] = &got[i]
			}
			if err := conn.QueryRowContext(ctx, `SELECT * FROM t`).Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			// An untyped column reads a time back as the text mattn stored.
			want := [12]any{int64(8), int64(-3), int64(9), "tag", "SHOUT", nil, "set", []byte("b"), 1.5, int64(1), "2026-11-27 12:00:00+00:00", nil}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("row = %#v\nwant  %#v", got, want)
			}
			for _, st := range []*writerStmt{ins, upd} {
				if (st.raw != nil) != raw {
					t.Errorf("raw statement: %v, want %v", st.raw != nil, raw)
				}
				if err := c.closeWriterStmt(st); err != nil {
					t.Errorf("close: %v", err)
				}
			}
		})
	}
}
