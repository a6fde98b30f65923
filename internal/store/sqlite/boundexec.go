package sqlite

// The writer's hot statements in one call into SQLite (boundexec.c).
//
// go-sqlite3 runs a prepared statement with one cgo call per argument (its
// bindValue), one for the reset and one for the step. A job's lease or
// finish binds about twenty arguments, so the applier crossed into C some
// twenty-two times a statement; the crossings and go-sqlite3's per-argument
// switch were a sixth of the applier's samples in an embedded drain.
// boundExec lays the arguments out in three pointer-free arrays and a byte
// buffer (the texts and blobs end to end) and makes one call, which binds
// them as SQLITE_STATIC, steps, and resets the statement before it
// returns: SQLite never holds a pointer into Go memory past the call.
//
// It works on the statement go-sqlite3 prepared (sqlstore's writerStmt
// keeps it, Dialect.BoundExec) and reaches its sqlite3_stmt through the
// unexported field go-sqlite3 keeps it in. newBoundExec checks what it
// found: the statement's SQL text, as SQLite returns it, must be the text
// prepared, and its parameter count the driver's; otherwise (another
// go-sqlite3 layout) it returns nil and the statement runs through the
// driver, as before. The values bind as go-sqlite3 binds them (bindValue):
// bool as 0 or 1, time.Time as text in go-sqlite3's first timestamp
// format, an empty []byte as an empty blob and a nil one as NULL, and any
// other type through database/sql's default converter. A failure returns
// a sqlite3.Error with go-sqlite3's codes and message (errors.As finds
// it, as constraint and the store's error checks expect).

/*
#include "boundexec.h"
*/
import "C"

import (
	"database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"strings"
	"syscall"
	"time"
	"unsafe"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// boundKind is how an argument binds (boundexec.c's K_*).
type boundKind = C.uchar

const (
	boundNull  boundKind = 0
	boundInt   boundKind = 1
	boundFloat boundKind = 2
	boundText  boundKind = 3
	boundBlob  boundKind = 4
)

// boundExec runs one prepared statement; its arrays are reused from run to
// run (the writer's statements run on one goroutine at a time).
type boundExec struct {
	stmt  *C.sqlite3_stmt
	n     int // the statement's parameters
	kinds []C.uchar
	vals  []C.sqlite3_int64
	lens  []C.int
	buf   []byte
	err   []byte // the failure's message, NUL-terminated
}

// newBoundExec returns the one-call runner for raw, go-sqlite3's statement
// prepared from q, or nil if raw is not one whose handle it can find and
// check.
func newBoundExec(raw driver.Stmt, q string) func(args []any) (int64, error) {
	st := stmtHandle(raw)
	if st == nil {
		return nil
	}
	n := int(C.sqlite3_bind_parameter_count(st))
	if n != raw.NumInput() || strings.TrimSpace(C.GoString(C.sqlite3_sql(st))) != strings.TrimSpace(q) {
		return nil
	}
	b := &boundExec{stmt: st, n: n, kinds: make([]C.uchar, n), vals: make([]C.sqlite3_int64, n), lens: make([]C.int, n), err: make([]byte, 512)}
	return b.exec
}

// stmtHandle is the sqlite3_stmt of go-sqlite3's statement raw (its field
// s), or nil.
func stmtHandle(raw driver.Stmt) *C.sqlite3_stmt {
	st, ok := raw.(*sqlite3.SQLiteStmt)
	if !ok || st == nil {
		return nil
	}
	f := reflect.ValueOf(st).Elem().FieldByName("s")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil
	}
	return *(**C.sqlite3_stmt)(unsafe.Pointer(f.UnsafeAddr()))
}

// exec binds args, steps the statement once and returns the rows it
// changed.
func (b *boundExec) exec(args []any) (int64, error) {
	if len(args) != b.n {
		return 0, fmt.Errorf("sql: expected %d arguments, got %d", b.n, len(args))
	}
	b.buf = b.buf[:0]
	for i, a := range args {
		if err := b.set(i, a); err != nil {
			return 0, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
	}
	var changes C.longlong
	var sysErrno C.int
	rc := C.fairway_bound_exec(b.stmt, C.int(b.n), first(b.kinds), first(b.vals), first(b.lens),
		(*C.char)(unsafe.Pointer(first(b.buf))), &changes, (*C.char)(unsafe.Pointer(&b.err[0])), C.int(len(b.err)), &sysErrno)
	if rc != 0 {
		return 0, b.failure(int(rc), int(sysErrno))
	}
	return int64(changes), nil
}

// set lays argument i out.
func (b *boundExec) set(i int, a any) error {
	switch v := a.(type) {
	case nil:
		b.kinds[i] = boundNull
	case int64:
		b.kinds[i], b.vals[i] = boundInt, C.sqlite3_int64(v)
	case string:
		b.setBytes(i, boundText, len(v))
		b.buf = append(b.buf, v...)
	case []byte:
		if v == nil {
			b.kinds[i] = boundNull
			return nil
		}
		b.setBytes(i, boundBlob, len(v))
		b.buf = append(b.buf, v...)
	case bool:
		b.kinds[i], b.vals[i] = boundInt, 0
		if v {
			b.vals[i] = 1
		}
	case float64:
		b.kinds[i], b.vals[i] = boundFloat, C.sqlite3_int64(math.Float64bits(v))
	case time.Time:
		start := len(b.buf)
		b.buf = v.AppendFormat(b.buf, sqlite3.SQLiteTimestampFormats[0])
		b.kinds[i], b.vals[i], b.lens[i] = boundText, C.sqlite3_int64(start), C.int(len(b.buf)-start)
	default:
		cv, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return err
		}
		switch cv.(type) {
		case nil, int64, string, []byte, bool, float64, time.Time:
			return b.set(i, cv)
		}
		return fmt.Errorf("unsupported type %T", a) // as go-sqlite3's bindValue
	}
	return nil
}

// first is the address of s's first element, or nil if s is empty.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// setBytes records argument i as n bytes of kind k at the buffer's end.
func (b *boundExec) setBytes(i int, k boundKind, n int) {
	b.kinds[i], b.vals[i], b.lens[i] = k, C.sqlite3_int64(len(b.buf)), C.int(n)
}

// failure is the sqlite3.Error of result code rc, as go-sqlite3 builds it
// (lastError), with the message boundexec.c copied.
func (b *boundExec) failure(rc, sysErrno int) error {
	msg := C.GoString((*C.char)(unsafe.Pointer(&b.err[0])))
	e := sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(rc)}
	if e.Code == sqlite3.ErrCantOpen || (e.Code == sqlite3.ErrIoErr && e.ExtendedCode != sqlite3.ErrIoErrNoMem) {
		e.SystemErrno = syscall.Errno(sysErrno)
	}
	return &boundError{err: e, msg: msg}
}

// boundError is a sqlite3.Error whose message is SQLite's (go-sqlite3
// keeps it in an unexported field).
type boundError struct {
	err sqlite3.Error
	msg string
}

func (e *boundError) Error() string {
	s := e.msg
	if s == "" {
		s = e.err.Error()
	} else if e.err.SystemErrno != 0 {
		s += ": " + e.err.SystemErrno.Error()
	}
	return s
}

// As lets errors.As find the sqlite3.Error, as with go-sqlite3's own.
func (e *boundError) As(target any) bool {
	if t, ok := target.(*sqlite3.Error); ok {
		*t = e.err
		return true
	}
	return false
}
