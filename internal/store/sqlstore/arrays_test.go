package sqlstore

import (
	"reflect"
	"testing"
)

// columnArrays types each column for the driver: a plain slice when no
// value is NULL, a slice of pointers (nil for NULL) when one is; an int
// is a bigint; a value of another type than its column's is refused.
func TestColumnArrays(t *testing.T) {
	rows := [][]any{
		{"a", int64(1), true, []byte("x"), 1.5, nil, 7},
		{"b", int64(2), false, []byte("y"), 2.5, "n", int64(8)},
	}
	types := []string{"text", "bigint", "boolean", "bytea", "double precision", "text", "bigint"}
	got, ok := columnArrays(rows, types)
	if !ok {
		t.Fatal("refused")
	}
	n := "n"
	want := []any{[]string{"a", "b"}, []int64{1, 2}, []bool{true, false}, [][]byte{[]byte("x"), []byte("y")},
		[]float64{1.5, 2.5}, []*string{nil, &n}, []int64{7, 8}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columnArrays = %#v, want %#v", got, want)
	}
	if rows[0][6] != 7 {
		t.Errorf("the rows were changed: %#v", rows[0][6])
	}
	if _, ok := columnArrays([][]any{{"a"}, {int64(1)}}, []string{"text"}); ok {
		t.Error("a bigint in a text column was taken")
	}
}

// The array statements: one text a shape, a parameter a column.
func TestArraySQL(t *testing.T) {
	q, types := transitionShape{fields: 1, guardAttempt: true, fromStates: 1}.arraySQL("(state || '')")
	want := "UPDATE jobs SET updated_at = v.u, state = v.c0 FROM unnest(?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[])" +
		" AS v(u, c0, id, att, s0) WHERE jobs.id = v.id AND jobs.attempt = v.att AND (state || '') IN (v.s0)"
	if q != want || len(types) != 5 {
		t.Errorf("arraySQL:\n got %s (%v)\nwant %s", q, types, want)
	}
}
