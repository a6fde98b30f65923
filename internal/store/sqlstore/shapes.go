package sqlstore

import (
	"fmt"
	"strings"
)

// Insert shapes. A job or execution row is inserted with the columns
// that differ from their default only: a column left out takes its
// DEFAULT, which is the value that would have been bound (NULL for a
// nullable column, 0, FALSE or '' for the others), so the row is the
// same, and every parameter not bound is a call into the driver saved (on
// SQLite one cgo call each; a submitted job leaves most of its 57 columns
// at their defaults). Rows of one statement share its column list: the
// writer groups them by shape, the set of columns they write.

// colDefault is what a column holds when an INSERT leaves it out.
type colDefault uint8

const (
	colRequired colDefault = iota // no default: always written
	colNull                       // nullable, no DEFAULT: NULL
	colZero                       // NOT NULL DEFAULT 0, FALSE or ''
)

// insertShape has bit i set when the i-th column of the table's insert
// column list is written.
type insertShape uint64

// insertTable is a table's insert column list and its columns' defaults.
type insertTable struct {
	name     string
	cols     []string
	defaults []colDefault
	all      insertShape
	// onConflict ends the unpiped inserts into the table ("" or " ON
	// CONFLICT (id) DO NOTHING": a taken id changes no row, and the count
	// of rows inserted tells, checkInserted).
	onConflict string
}

// newInsertTable classifies cols: required ones, zero ones (NOT NULL
// DEFAULT 0, FALSE or ”), and the rest nullable with no DEFAULT. The
// drivers' tests check it against their schema (InsertDefaults).
func newInsertTable(name string, cols, required, zero []string) *insertTable {
	if len(cols) > 64 {
		panic(fmt.Sprintf("sqlstore: %d insert columns, an insertShape holds 64", len(cols)))
	}
	t := &insertTable{name: name, cols: cols, defaults: make([]colDefault, len(cols))}
	for i, c := range cols {
		switch {
		case contains(required, c):
			t.defaults[i] = colRequired
		case contains(zero, c):
			t.defaults[i] = colZero
		default:
			t.defaults[i] = colNull
		}
		t.all |= 1 << i
	}
	return t
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// isDefault reports whether v, bound to a column with default d, stores
// what leaving the column out stores.
func isDefault(v any, d colDefault) bool {
	switch d {
	case colNull:
		return v == nil
	case colZero:
		switch x := v.(type) {
		case string:
			return x == ""
		case int64:
			return x == 0
		case int:
			return x == 0
		case bool:
			return !x
		case float64:
			return x == 0
		}
	}
	return false
}

// shape returns the columns of args (in cols order) that must be written
// and their values.
func (t *insertTable) shape(args []any) (insertShape, []any) {
	var sh insertShape
	n := 0
	for i, v := range args {
		if !isDefault(v, t.defaults[i]) {
			sh |= 1 << i
			n++
		}
	}
	out := make([]any, 0, n) // kept with the held row: no more than it needs
	for i, v := range args {
		if sh&(1<<i) != 0 {
			out = append(out, v)
		}
	}
	return sh, out
}

// columns lists the columns of sh, comma-separated, and how many.
func (t *insertTable) columns(sh insertShape) (string, int) {
	var names []string
	for i, c := range t.cols {
		if sh&(1<<i) != 0 {
			names = append(names, c)
		}
	}
	return strings.Join(names, ", "), len(names)
}

// shapedRow is a row to insert: its shape and the values of its columns.
type shapedRow struct {
	shape insertShape
	args  []any
}

// byShape groups rows by shape, each group in the rows' order, the groups
// in the order of their first row. An insert of distinct keys may be
// reordered so; callers whose rows may share a key use runs instead.
func byShape(rows []shapedRow) [][]shapedRow {
	idx := map[insertShape]int{}
	var out [][]shapedRow
	for _, r := range rows {
		i, ok := idx[r.shape]
		if !ok {
			i = len(out)
			idx[r.shape] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// runs cuts rows into runs of consecutive rows of one shape: their order
// is kept.
func runs(rows []shapedRow) [][]shapedRow {
	var out [][]shapedRow
	for from := 0; from < len(rows); {
		to := from + 1
		for to < len(rows) && rows[to].shape == rows[from].shape {
			to++
		}
		out = append(out, rows[from:to])
		from = to
	}
	return out
}

// InsertDefaults returns, for the drivers' schema tests, each insert
// column of table ("jobs", "job_specs" or "executions") and its default:
// "required", "null" or "zero".
func InsertDefaults(table string) map[string]string {
	t := map[string]*insertTable{"jobs": jobTable, "job_specs": specTable, "executions": execTable}[table]
	out := map[string]string{}
	for i, c := range t.cols {
		out[c] = [...]string{"required", "null", "zero"}[t.defaults[i]]
	}
	return out
}
