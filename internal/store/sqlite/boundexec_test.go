package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// valuer is a driver.Valuer, converted as database/sql converts it.
type valuer struct{ s string }

func (v valuer) Value() (driver.Value, error) { return "valuer:" + v.s, nil }

// boundConn is a connection to a new database with tables t1 and t2 of
// the same columns, and the driver statements prepared on it.
type boundConn struct {
	conn *sql.Conn
}

func openBoundConn(t testing.TB) *boundConn {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "bound.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	for _, table := range []string{"t1", "t2"} {
		if _, err := conn.ExecContext(context.Background(),
			"CREATE TABLE "+table+" (k INTEGER PRIMARY KEY, a, b, c, d, e, f, g, h, i, j, l, m, n)"); err != nil {
			t.Fatal(err)
		}
	}
	return &boundConn{conn: conn}
}

// prepare prepares q on the driver connection.
func (c *boundConn) prepare(t testing.TB, q string) driver.Stmt {
	t.Helper()
	var st driver.Stmt
	if err := c.conn.Raw(func(dc any) error {
		var err error
		st, err = dc.(driver.ConnPrepareContext).PrepareContext(context.Background(), q)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.conn.Raw(func(any) error { return st.Close() }) })
	return st
}

// driverExec runs st through go-sqlite3, as sqlstore's rawexec does
// without BoundExec.
func (c *boundConn) driverExec(st driver.Stmt, args []any) (int64, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return 0, err
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	var n int64
	err := c.conn.Raw(func(any) error {
		res, err := st.(driver.StmtExecContext).ExecContext(context.Background(), named)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// TestBoundExecBindsAsTheDriver: every kind of argument the writer passes
// is stored with the same type and value by one call as by go-sqlite3's
// binds, and an UPDATE reports the same rows changed.
func TestBoundExecBindsAsTheDriver(t *testing.T) {
	c := openBoundConn(t)
	const cols = "(k, a, b, c, d, e, f, g, h, i, j, l, m, n) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	viaDriver := c.prepare(t, "INSERT INTO t1 "+cols)
	q := "INSERT INTO t2 " + cols
	bound := newBoundExec(c.prepare(t, q), q)
	if bound == nil {
		t.Fatal("newBoundExec did not recognise go-sqlite3's statement")
	}
	var nilText *string
	at := time.Date(2026, 11, 28, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	rows := [][]any{
		{int64(1), nil, int64(-7), "", "héllo\x00wörld", []byte{}, []byte(nil), []byte{0, 1, 2}, true, false, 1.5, at, 42, valuer{"v"}},
		{int64(2), nilText, int64(1 << 62), "x", "", []byte("b"), nil, nil, false, true, -0.0, time.Time{}, int32(-3), uint8(9)},
	}
	for _, r := range rows {
		if _, err := c.driverExec(viaDriver, r); err != nil {
			t.Fatalf("driver: %v", err)
		}
		n, err := bound(r)
		if err != nil || n != 1 {
			t.Fatalf("bound: %d rows, %v", n, err)
		}
	}
	dump := func(table string) []string {
		t.Helper()
		rs, err := c.conn.QueryContext(context.Background(), "SELECT k, typeof(a)||quote(a), typeof(b)||quote(b), typeof(c)||quote(c), "+
			"typeof(d)||quote(d), typeof(e)||quote(e), typeof(f)||quote(f), typeof(g)||quote(g), typeof(h)||quote(h), "+
			"typeof(i)||quote(i), typeof(j)||quote(j), typeof(l)||quote(l), typeof(m)||quote(m), typeof(n)||quote(n) FROM "+table+" ORDER BY k")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			v := make([]string, 14)
			p := make([]any, 14)
			for i := range v {
				p[i] = &v[i]
			}
			if err := rs.Scan(p...); err != nil {
				t.Fatal(err)
			}
			out = append(out, v...)
		}
		return out
	}
	want, got := dump("t1"), dump("t2")
	if len(want) != 28 {
		t.Fatalf("driver rows: %q", want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %d: bound %s, driver %s", i%14, got[i], want[i])
		}
	}

	uq := "UPDATE t2 SET a = ? WHERE k <= ?"
	upd := newBoundExec(c.prepare(t, uq), uq)
	if n, err := upd([]any{"z", int64(2)}); err != nil || n != 2 {
		t.Fatalf("update: %d rows, %v; want 2", n, err)
	}
	if n, err := upd([]any{"z", int64(0)}); err != nil || n != 0 {
		t.Fatalf("update of none: %d rows, %v; want 0", n, err)
	}
	if _, err := upd([]any{"z"}); err == nil {
		t.Fatal("one argument of two: no error")
	}
	if _, err := upd([]any{struct{}{}, int64(1)}); err == nil {
		t.Fatal("an argument of no driver type: no error")
	}
}

// TestBoundExecFailsAsTheDriver: a constraint's failure is the same
// sqlite3.Error, with the same message, and the statement runs again
// after it.
func TestBoundExecFailsAsTheDriver(t *testing.T) {
	c := openBoundConn(t)
	q := "INSERT INTO t1 (k, a) VALUES (?, ?)"
	viaDriver := c.prepare(t, q)
	bound := newBoundExec(c.prepare(t, q), q)
	if _, err := bound([]any{int64(1), "a"}); err != nil {
		t.Fatal(err)
	}
	_, want := c.driverExec(viaDriver, []any{int64(1), "b"})
	_, got := bound([]any{int64(1), "c"})
	if want == nil || got == nil {
		t.Fatalf("duplicate key: driver %v, bound %v", want, got)
	}
	if got.Error() != want.Error() {
		t.Errorf("message: bound %q, driver %q", got, want)
	}
	var ge, we sqlite3.Error
	if !errors.As(got, &ge) || !errors.As(want, &we) || ge.Code != we.Code || ge.ExtendedCode != we.ExtendedCode {
		t.Errorf("codes: bound %+v, driver %+v", ge, we)
	}
	if !isUniqueViolation(got) {
		t.Error("isUniqueViolation(bound's error) = false")
	}
	if n, err := bound([]any{int64(2), "d"}); err != nil || n != 1 {
		t.Fatalf("after the failure: %d rows, %v", n, err)
	}
}

// TestBoundExecRefusesWhatItCannotCheck: a statement that is not
// go-sqlite3's, or whose text is not the one given, runs through the
// driver (newBoundExec returns nil).
func TestBoundExecRefusesWhatItCannotCheck(t *testing.T) {
	c := openBoundConn(t)
	q := "INSERT INTO t1 (k) VALUES (?)"
	if newBoundExec(c.prepare(t, q), "INSERT INTO t2 (k) VALUES (?)") != nil {
		t.Error("a statement of another text was accepted")
	}
	if newBoundExec(fakeStmt{}, q) != nil {
		t.Error("a statement of another driver was accepted")
	}
}

type fakeStmt struct{ driver.Stmt }

// BenchmarkBoundExec: one UPDATE of 14 arguments (a transition binds
// about twenty) through go-sqlite3's binds and through one call.
func BenchmarkBoundExec(b *testing.B) {
	const q = "UPDATE t1 SET a = ?, b = ?, c = ?, d = ?, e = ?, f = ?, g = ?, h = ?, i = ?, j = ?, l = ?, m = ? WHERE k = ? AND +n IS ?"
	args := []any{"2026-11-28T03:04:05.123Z", "running", int64(1), "worker-1", nil, nil, int64(3), "x", nil, int64(0), "tenant", "lane", int64(1), nil}
	for _, via := range []string{"driver", "bound"} {
		b.Run(via, func(b *testing.B) {
			c := openBoundConn(b)
			if _, err := c.conn.ExecContext(context.Background(), "INSERT INTO t1 (k) VALUES (1)"); err != nil {
				b.Fatal(err)
			}
			st := c.prepare(b, q)
			run := func(args []any) (int64, error) { return c.driverExec(st, args) }
			if via == "bound" {
				run = newBoundExec(st, q)
			}
			b.ReportAllocs()
			for b.Loop() {
				if n, err := run(args); err != nil || n != 1 {
					b.Fatalf("%d rows, %v", n, err)
				}
			}
		})
	}
}
