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
			col, ok = column[string](rows, c)
		case "bigint":
			col, ok = bigintColumn(rows, c)
		case "boolean":
			col, ok = column[bool](rows, c)
		case "bytea":
			col, ok = column[[]byte](rows, c)
		case "double precision":
			col, ok = column[float64](rows, c)
		}
		if !ok {
			return nil, false
		}
		out[c] = col
	}
	return out, true
}

// column is column c of rows as a []T, or a []*T if one is NULL.
func column[T any](rows [][]any, c int) (any, bool) {
	vals := make([]T, len(rows))
	nulls := false
	for i, r := range rows {
		switch v := r[c].(type) {
		case nil:
			nulls = true
		case T:
			vals[i] = v
		default:
			return nil, false
		}
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

// bigintColumn is column[int64], taking int values too.
func bigintColumn(rows [][]any, c int) (any, bool) {
	for _, r := range rows {
		if _, isInt := r[c].(int); isInt {
			return column[int64](intsAsInt64(rows, c), 0)
		}
	}
	return column[int64](rows, c)
}

// intsAsInt64 is column c of rows, as one-value rows, its ints int64s.
func intsAsInt64(rows [][]any, c int) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		v := r[c]
		if n, isInt := v.(int); isInt {
			v = int64(n)
		}
		out[i] = []any{v}
	}
	return out
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
