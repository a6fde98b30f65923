package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// The JSON decoder's type errors name Go types ("must be []string");
// these functions say the same in the API's words, naming the field and,
// where it helps, an example of a good value.

// fieldShapes are the members whose expected shape is best said with an
// example; the key is the member's name (the last part of its path).
var fieldShapes = map[string]string{
	"command":    `an array of strings, e.g. ["echo","hi"]`,
	"labels":     `an array of strings, e.g. ["gpu"]`,
	"env":        `an object of strings, e.g. {"LANG":"C.UTF-8"}`,
	"depends_on": `an array of objects, e.g. [{"job_id":"01J...","condition":"success"}]`,
	"jobs":       `an array of job specs, e.g. [{"type":"report","command":["echo","hi"]}]`,
	"retry_on":   `an array of failure classes, e.g. ["exit_code","timeout"]`,
	"resources":  `an object, e.g. {"cpu":0.5,"memory_mb":512,"gpu":1}`,
	"retry":      `an object, e.g. {"kind":"exponential","delay_ms":1000,"max_delay_ms":60000,"jitter":true,"retry_on":["exit_code"]}`,
	"template":   `a job spec, e.g. {"type":"report","command":["echo","hi"]}`,
}

// singleObjects are the members of fieldShapes that are one object, not
// a collection of items.
var singleObjects = map[string]bool{"resources": true, "retry": true, "template": true}

// rootShapes name what a whole request body is, by its Go type's name.
var rootShapes = map[string]string{
	"JobSpec":      "a JSON object (a job spec)",
	"BatchRequest": `a JSON object ({"jobs": [job spec, ...]})`,
}

// typeError answers a JSON value of the wrong type.
func typeError(te *json.UnmarshalTypeError, root reflect.Type) *apiError {
	got := jsonValueWords(te.Value)
	var ae *apiError
	switch last := te.Field[strings.LastIndex(te.Field, ".")+1:]; {
	case te.Field == "":
		ae = errf(http.StatusBadRequest, api.CodeInvalidArgument, "body must be %s, got %s", rootWords(root), got)
	case fieldShapes[last] != "" && !singleObjects[last] && isItem(te.Type):
		ae = errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s must be %s; one of its items is %s", te.Field, fieldShapes[last], got)
	case fieldShapes[last] != "":
		ae = errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s must be %s, got %s", te.Field, fieldShapes[last], got)
	default:
		ae = errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s must be %s, got %s", te.Field, typeWords(te.Type), got)
	}
	ae.body.Field = te.Field
	return ae
}

// isItem says whether t, the type the decoder wanted at a field with an
// array or object shape, is one of its items rather than the field itself.
func isItem(t reflect.Type) bool {
	k := t.Kind()
	return k != reflect.Slice && k != reflect.Map && k != reflect.Array
}

func rootWords(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	if s, ok := rootShapes[t.Name()]; ok {
		return s
	}
	return typeWords(t)
}

// typeWords says what a JSON value of Go type t looks like.
func typeWords(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeWords(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
		return "an array"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return `an RFC 3339 time, e.g. "2026-12-01T09:00:00Z"`
		}
		return objectWords(t)
	}
	return "a JSON value"
}

// objectWords says what a JSON object of struct type t holds: its
// members, as the API names them.
func objectWords(t reflect.Type) string {
	var members []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		members = append(members, name)
	}
	switch n := len(members); {
	case n == 0:
		return "a JSON object"
	case n == 1:
		return "a JSON object with the member " + members[0]
	case n > 6:
		return "a JSON object with members such as " + strings.Join(members[:5], ", ")
	default:
		return "a JSON object with the members " + strings.Join(members[:n-1], ", ") + " and " + members[n-1]
	}
}

// jsonValueWords says what the decoder found: "array" → "an array",
// "number 1.5" → "the number 1.5".
func jsonValueWords(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "array", v == "object":
		return "an " + v
	case v == "bool":
		return "true or false"
	case v == "":
		return "something else"
	}
	return "a " + v
}

// timeError answers a time member that is not an RFC 3339 string; the
// decoder's error does not say which member, so it is found in the body.
func timeError(body []byte) *apiError {
	const want = `an RFC 3339 time, e.g. "2026-12-01T09:00:00Z" (with a zone offset or Z)`
	field := badTimeMember(body)
	if field == "" {
		return errf(http.StatusBadRequest, api.CodeInvalidArgument, "a time must be %s", want)
	}
	ae := errf(http.StatusBadRequest, api.CodeInvalidArgument, "%s must be %s", field, want)
	ae.body.Field = field
	return ae
}

// isTimeError says whether err is time.Time refusing a JSON value.
func isTimeError(err error) bool {
	var pe *time.ParseError
	return errors.As(err, &pe) || strings.HasPrefix(err.Error(), "Time.UnmarshalJSON")
}

// timeMembers are the request members that hold times.
var timeMembers = map[string]bool{"run_at": true, "started_at": true, "finished_at": true, "at": true,
	"start_at": true, "end_at": true, "start_time": true, "end_time": true}

// badTimeMember returns the path of the first time member in body whose
// value does not decode as a time, "" if none is found.
func badTimeMember(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return findBadTime(v, "")
}

func findBadTime(v any, path string) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := strings.TrimPrefix(path+"."+k, ".")
			if timeMembers[k] && x[k] != nil {
				raw, _ := json.Marshal(x[k])
				var t time.Time
				if json.Unmarshal(raw, &t) != nil {
					return p
				}
				continue
			}
			if f := findBadTime(x[k], p); f != "" {
				return f
			}
		}
	case []any:
		for i, item := range x {
			if f := findBadTime(item, fmt.Sprintf("%s[%d]", path, i)); f != "" {
				return f
			}
		}
	}
	return ""
}
