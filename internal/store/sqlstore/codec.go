package sqlstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/internal/store"
)

// Values going in. Zero values of optional columns become NULL.

func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// timesArg is a list of times as unix microseconds, for a JSON column.
func timesArg(ts []time.Time) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.UnixMicro()
	}
	return out
}

// timesCol is the inverse of timesArg.
func timesCol(us []int64) []time.Time {
	if len(us) == 0 {
		return nil
	}
	out := make([]time.Time, len(us))
	for i, u := range us {
		out[i] = time.UnixMicro(u).UTC()
	}
	return out
}

func strArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func bytesArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func msArg(d time.Duration) int64 { return d.Milliseconds() }

func intPtrArg(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

// idArg is an event id, NULL for 0 (none).
func idArg(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// idCol scans an event id, 0 for NULL.
type idCol struct{ p *int64 }

func (c idCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = 0
	case int64:
		*c.p = x
	default:
		return fmt.Errorf("id column: unexpected %T", v)
	}
	return nil
}

func boolPtrArg(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

// jsonArg encodes v as JSON text, NULL when v is nil or empty.
func jsonArg(v any) (any, error) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		if rv.Len() == 0 {
			return nil, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	return string(b), nil
}

func rawJSONArg(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}

// Values coming out: sql.Scanner adapters that map NULL to the zero value.

type timeCol struct{ p *time.Time }

func (c timeCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = time.Time{}
	case int64:
		*c.p = time.UnixMicro(x).UTC()
	default:
		return fmt.Errorf("time column: unexpected %T", v)
	}
	return nil
}

type msCol struct{ p *time.Duration }

func (c msCol) Scan(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("duration column: unexpected %T", v)
	}
	*c.p = time.Duration(x) * time.Millisecond
	return nil
}

// msNullCol scans milliseconds or NULL (zero) into a duration.
type msNullCol struct{ p *time.Duration }

func (c msNullCol) Scan(v any) error {
	if v == nil {
		*c.p = 0
		return nil
	}
	return msCol(c).Scan(v)
}

// strCol scans TEXT or NULL into any string type.
type strCol[T ~string] struct{ p *T }

func (c strCol[T]) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = ""
	case string:
		*c.p = T(x)
	case []byte:
		*c.p = T(x)
	default:
		return fmt.Errorf("text column: unexpected %T", v)
	}
	return nil
}

type intPtrCol struct{ p **int }

func (c intPtrCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = nil
	case int64:
		n := int(x)
		*c.p = &n
	default:
		return fmt.Errorf("int column: unexpected %T", v)
	}
	return nil
}

type boolPtrCol struct{ p **bool }

func (c boolPtrCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = nil
	case int64:
		b := x != 0
		*c.p = &b
	case bool:
		*c.p = &x
	default:
		return fmt.Errorf("bool column: unexpected %T", v)
	}
	return nil
}

// bytesCol scans a BLOB, NULL or empty to nil.
type bytesCol struct{ p *[]byte }

func (c bytesCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = nil
	case []byte:
		if len(x) == 0 {
			*c.p = nil
		} else {
			*c.p = append([]byte(nil), x...)
		}
	case string:
		*c.p = []byte(x)
	default:
		return fmt.Errorf("blob column: unexpected %T", v)
	}
	return nil
}

// jsonCol decodes JSON text into p; NULL leaves p's zero value.
type jsonCol struct{ p any }

func (c jsonCol) Scan(v any) error {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		b = []byte(x)
	case []byte:
		b = x
	default:
		return fmt.Errorf("json column: unexpected %T", v)
	}
	switch p := c.p.(type) {
	case *[]string:
		if ss, ok := fastStrings(b, nil); ok {
			*p = ss
			return nil
		}
	case *map[string]string:
		if kv, ok := fastStrings(b, nil); ok && len(kv)%2 == 0 {
			m := make(map[string]string, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			*p = m
			return nil
		}
	}
	return json.Unmarshal(b, c.p)
}

// fastStrings decodes the compact JSON that json.Marshal writes for a
// []string (["a","b"]) or a map[string]string ({"k":"v"}, returned as
// k, v, ...) when no string holds an escape; ok is false for anything else,
// and the caller falls back to encoding/json. Rebuilding the dispatcher's
// index at start decodes these columns for every unfinished job.
func fastStrings(b []byte, out []string) (_ []string, ok bool) {
	if len(b) < 2 {
		return nil, false
	}
	open, close, sep := b[0], b[len(b)-1], byte(',')
	if !(open == '[' && close == ']') && !(open == '{' && close == '}') {
		return nil, false
	}
	body := b[1 : len(b)-1]
	for i := 0; i < len(body); {
		if body[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(body) && body[end] != '"' {
			if body[end] == '\\' || body[end] < 0x20 {
				return nil, false
			}
			end++
		}
		if end == len(body) || !utf8.Valid(body[i+1:end]) {
			return nil, false
		}
		out = append(out, string(body[i+1:end]))
		i = end + 1
		if i == len(body) {
			break
		}
		want := sep
		if open == '{' && len(out)%2 == 1 {
			want = ':'
		}
		if body[i] != want || i+1 == len(body) {
			return nil, false
		}
		i++
	}
	if open == '{' && len(out)%2 != 0 {
		return nil, false
	}
	return out, true
}

// rawJSONCol keeps JSON text as it is.
type rawJSONCol struct{ p *json.RawMessage }

func (c rawJSONCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.p = nil
	case string:
		*c.p = json.RawMessage(x)
	case []byte:
		*c.p = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("json column: unexpected %T", v)
	}
	return nil
}
