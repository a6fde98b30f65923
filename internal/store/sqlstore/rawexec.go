package sqlstore

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// Writer statements run on the driver's own statement (Dialect.RawExec).
//
// The writer's hottest statements are the per-job transition UPDATE and
// the multi-row job insert, prepared once on the writer connection. On
// SQLite a statement costs no round trip, so database/sql's per-call work
// showed in a drain: finding the statement's connection and locking it,
// and building the []driver.NamedValue of every call (its own allocation,
// about a tenth of the bytes an embedded SQLite drain allocated). A
// writerStmt of a RawExec dialect is prepared on the driver connection
// (sql.Conn.Raw) and run there with one reused argument slice
// (Core.rawArgs); the arguments are converted as database/sql converts
// them for a driver without a NamedValueChecker
// (driver.DefaultParameterConverter), and their count is checked against
// the statement's, as database/sql does. The
// writer connection is the Writer's alone for the transaction, so running
// on it directly changes nothing else. A dialect with a BoundExec runs
// the statement with all its arguments in one call into the driver
// instead (SQLite: boundexec.go), when BoundExec recognises it.

// writerStmt is a statement prepared on the writer connection.
type writerStmt struct {
	st     *sql.Stmt                       // through database/sql; nil when raw is set
	raw    driver.Stmt                     // on the driver connection (Dialect.RawExec)
	inputs int                             // raw's placeholder count; -1 when the driver does not say
	bound  func(args []any) (int64, error) // raw in one call (Dialect.BoundExec); nil if none
}

// prepareWriter prepares q (with ? placeholders) on the writer
// connection.
func (c *Core) prepareWriter(q string) (*writerStmt, error) {
	if !c.D.RawExec {
		st, err := c.prepareOn(q)
		if err != nil {
			return nil, err
		}
		return &writerStmt{st: st}, nil
	}
	q = c.D.rebind(q)
	var ws *writerStmt
	err := c.WConn.Raw(func(dc any) error {
		prep, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return errors.New("driver connection cannot prepare with a context")
		}
		raw, err := prep.PrepareContext(bg, q)
		if err != nil {
			return err
		}
		if _, ok := raw.(driver.StmtExecContext); !ok {
			_ = raw.Close()
			return errors.New("driver statement cannot execute with a context")
		}
		ws = &writerStmt{raw: raw, inputs: raw.NumInput()}
		if c.D.BoundExec != nil {
			ws.bound = c.D.BoundExec(raw, q)
		}
		return nil
	})
	return ws, err
}

// closeWriterStmt closes ws.
func (c *Core) closeWriterStmt(ws *writerStmt) error {
	if ws.st != nil {
		return ws.st.Close()
	}
	return c.WConn.Raw(func(any) error { return ws.raw.Close() })
}

// execStmt runs ws with args and returns the rows it changed.
func (w *Writer) execStmt(ws *writerStmt, args []any) (int64, error) {
	if ws.st != nil {
		return rowsChanged(ws.st.ExecContext(bg, args...))
	}
	if ws.inputs >= 0 && ws.inputs != len(args) {
		return 0, fmt.Errorf("sql: expected %d arguments, got %d", ws.inputs, len(args))
	}
	if ws.bound != nil {
		var n int64
		err := w.s.WConn.Raw(func(any) error {
			var err error
			n, err = ws.bound(args)
			return err
		})
		return n, err
	}
	named := w.s.rawArgs[:0]
	for i, arg := range args {
		v, err := driverValue(arg)
		if err != nil {
			return 0, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
		named = append(named, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	var n int64
	err := w.s.WConn.Raw(func(any) error {
		res, err := ws.raw.(driver.StmtExecContext).ExecContext(bg, named)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	clear(named) // the values are not kept past the statement
	w.s.rawArgs = named[:0]
	return n, err
}

// driverValue is arg as database/sql passes it to a driver that has no
// NamedValueChecker: the driver.Value kinds as they are, anything else
// through driver.DefaultParameterConverter (Valuers, named and pointer
// types, the other integer widths).
func driverValue(arg any) (driver.Value, error) {
	switch arg.(type) {
	case nil, string, int64, bool, float64, []byte, time.Time:
		return arg, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(arg)
}
