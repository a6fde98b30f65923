package sqlstore

import (
	"strings"
)

// Columns as arrays (Dialect.ArrayBatches). A batched statement that
// binds rows × columns parameters (a multi-row VALUES list) costs the
// driver an encoding, and the database a parse and a bind, per value,
// and is a distinct statement for every row count. On PostgreSQL the
// pipelined batches pass instead each column as one array parameter and
// read the rows back with unnest:
//
//	INSERT INTO jobs (id, tenant, ...) SELECT * FROM unnest($1::text[], $2::text[], ...)
//	UPDATE jobs SET ... FROM unnest($1::bigint[], ...) AS v(u, ..., id, att, s0) WHERE jobs.id = v.id AND ...
//
// so that a shape is one statement text, prepared once, whatever its row
// count, with a handful of parameters. A NULL is a NULL element; each
// column's array is typed by its SQL type (a transition's setField.typ;
// an insert column's by the Go type of its values, which within a shape
// are never NULL, shapes.go). Guards are unchanged: a transition whose
// guard misses its row is a row fewer changed, which the database's
// count fails (Dialect.ExpectRows) with ErrConflict, as with VALUES.

// maxArrayRows bounds the rows of one array statement.
const maxArrayRows = 1000

// MinArrayRows is the fewest rows a batch passes as arrays; smaller ones
// keep their VALUES lists (chunks of 4 and 1 rows). An array statement
// costs more to start than a VALUES one, in the database (unnest is a
// function a column, each with its own tuplestore) and in the driver (an
// array's header and plan a column): measured with pgx on this machine's
// PostgreSQL, a 12-column join of k rows, per row in the database and in
// the process, VALUES against arrays: k = 1: 6-8 and 7-10 µs against
// 14-16 and 10-12; k = 4: 4 and 3.4 against 5.5-6 and 3.2-5; k = 8:
// 3-3.75 and 3-4 against 3.5 and 2-2.5; k = 64: 2-2.25 and 3.4-3.6
// against 2-2.25 and 1.3-1.9. With the VALUES chunks a batch of 5 to 7
// rows is 2 to 4 statements, so arrays pay from about 6 rows.
const MinArrayRows = 6

// arrays reports whether a batch of n rows passes its columns as arrays.
func (w *Writer) arrays(n int) bool {
	least := w.s.D.ArrayMinRows
	if least == 0 {
		least = MinArrayRows
	}
	return w.s.D.ArrayBatches && n >= least
}

// sqlTypeOf is the SQL type of a column holding v, a value as the
// writer binds it (codec.go); "" for NULL or a type it never binds.
func sqlTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case int64, int:
		return "bigint"
	case bool:
		return "boolean"
	case []byte:
		return "bytea"
	case float64:
		return "double precision"
	}
	return ""
}

// insertTypes is the SQL types of the columns of rows (one shape), from
// the first non-NULL value of each; ok is false if a column has none.
func insertTypes(rows []shapedRow) ([]string, bool) {
	types := make([]string, len(rows[0].args))
	for c := range types {
		for _, r := range rows {
			if t := sqlTypeOf(r.args[c]); t != "" {
				types[c] = t
				break
			}
		}
		if types[c] == "" {
			return nil, false
		}
	}
	return types, true
}

// columnArrays is rows (each with a value per type) as one slice per
// column, typed for types: []string, []int64, []bool, [][]byte or
// []float64, or a slice of pointers ([]*string, ...) when the column has
// a NULL. ok is false if a value does not fit its column's type.
func columnArrays(rows [][]any, types []string) ([]any, bool) {
	out := make([]any, len(types))
	for c, typ := range types {
		var col any
		var ok bool
		switch typ {
		case "text":
			col, ok = column(rows, c, exactly[string])
		case "bigint":
			col, ok = column(rows, c, asInt64)
		case "boolean":
			col, ok = column(rows, c, exactly[bool])
		case "bytea":
			col, ok = column(rows, c, exactly[[]byte])
		case "double precision":
			col, ok = column(rows, c, exactly[float64])
		}
		if !ok {
			return nil, false
		}
		out[c] = col
	}
	return out, true
}

// columnChunks is rows as column arrays (columnArrays), maxArrayRows
// rows a statement: the i-th holds rows[i*maxArrayRows:]. ok is false if
// a value does not fit its column's type.
func columnChunks(rows [][]any, types []string) ([][]any, bool) {
	var stmts [][]any
	for from := 0; from < len(rows); from += maxArrayRows {
		args, ok := columnArrays(rows[from:min(from+maxArrayRows, len(rows))], types)
		if !ok {
			return nil, false
		}
		stmts = append(stmts, args)
	}
	return stmts, true
}

// column is column c of rows as a []T, or a []*T if one is NULL; as
// gives a value as a T, false if it does not fit.
func column[T any](rows [][]any, c int, as func(any) (T, bool)) (any, bool) {
	vals := make([]T, len(rows))
	nulls := false
	for i, r := range rows {
		if r[c] == nil {
			nulls = true
			continue
		}
		v, ok := as(r[c])
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	if !nulls {
		return vals, true
	}
	ptrs := make([]*T, len(rows))
	for i, r := range rows {
		if r[c] != nil {
			ptrs[i] = &vals[i]
		}
	}
	return ptrs, true
}

// exactly is a value of type T as itself.
func exactly[T any](v any) (T, bool) {
	t, ok := v.(T)
	return t, ok
}

// asInt64 is an int64 or an int as an int64 (the writer binds both).
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// unnestSQL is "unnest(?::t1[], ?::t2[], ...)" for types.
func unnestSQL(types []string) string {
	var b strings.Builder
	b.WriteString("unnest(")
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("?::" + t + "[]")
	}
	b.WriteString(")")
	return b.String()
}

// shapedArgs is the args of rows.
func shapedArgs(rows []shapedRow) [][]any {
	out := make([][]any, len(rows))
	for i := range rows {
		out[i] = rows[i].args
	}
	return out
}

// insertArraySQL is the INSERT into t of rows of shape sh from column
// arrays of types, with tail appended.
func (t *insertTable) insertArraySQL(sh insertShape, types []string, tail string) string {
	cols, _ := t.columns(sh)
	return "INSERT INTO " + t.name + " (" + cols + ") SELECT * FROM " + unnestSQL(types) + tail
}

// eventTypes are the SQL types of eventArgs' columns.
var eventTypes = []string{"text", "bigint", "text", "text", "bigint", "text", "text", "text"}

// eventInsertArraySQL is eventInsertSQL (withIDs: eventInsertWithIDsSQL)
// from column arrays. The rows come out of unnest in the arrays' order,
// so a sequence numbers them in that order.
func eventInsertArraySQL(withIDs bool) string {
	if withIDs {
		return `INSERT INTO events (id, job_id, attempt, tenant, type, at, actor, detail, schedule_id) SELECT * FROM ` +
			unnestSQL(append([]string{"bigint"}, eventTypes...))
	}
	return `INSERT INTO events (job_id, attempt, tenant, type, at, actor, detail, schedule_id) SELECT * FROM ` +
		unnestSQL(eventTypes) + " RETURNING id"
}
