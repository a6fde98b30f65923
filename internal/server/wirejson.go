package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"sync"

	segjson "github.com/segmentio/encoding/json"

	"github.com/fairwayhq/fairway/api"
)

// The answers of the hot paths (submit, batch submit, lease, start,
// heartbeat, complete) are encoded with github.com/segmentio/encoding/json
// instead of encoding/json: measured 2.5x less CPU per lease encoded, a
// fifth of the JSON the server spends per drained job (docs/benchmarks.md,
// "The worker protocol's CPU"). It writes the same bytes as writeJSON's
// encoding/json for the same value but for one thing: it copies a
// json.RawMessage as it is, where encoding/json compacts it. The callers
// compact the jobs' raw documents first (compactLeases, compactJob), so
// the answers are byte for byte those of encoding/json
// (wirejson_test.go).

// wireFlags are writeJSON's encoding/json settings: no HTML escaping, map
// keys sorted.
const wireFlags = segjson.SortMapKeys

// maxPooledAnswer bounds the buffers kept for reuse.
const maxPooledAnswer = 1 << 20

var answerPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeWireJSON answers with v as JSON, as writeJSON does. Every
// json.RawMessage in v must be compact.
func writeWireJSON(w http.ResponseWriter, status int, v any) {
	bp := answerPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledAnswer {
			answerPool.Put(bp)
		}
	}()
	b, err := segjson.Append((*bp)[:0], v, wireFlags)
	if err != nil {
		writeJSON(w, status, v) // encoding/json's answer to what it cannot encode
		return
	}
	b = append(b, '\n')
	*bp = b
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// compactLeases compacts the raw documents of the leases' jobs.
func compactLeases(leases []api.Lease) {
	for i := range leases {
		compactJob(&leases[i].Job)
	}
}

// compactJob compacts the job's raw documents (payload, result), as
// encoding/json does when it encodes them.
func compactJob(j *api.Job) {
	j.Payload = compactRaw(j.Payload)
	j.Result = compactRaw(j.Result)
}

// compactRaw is b compacted: b itself when it has no white space outside
// its strings (a stored document is most often compact already).
func compactRaw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || isCompact(b) {
		return b
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b // not JSON: the encoder reports it
	}
	return out.Bytes()
}

// isCompact reports whether the JSON text b has no white space outside
// its strings.
func isCompact(b []byte) bool {
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

// decodeFast decodes a request body into v (a pointer to a struct) with
// github.com/segmentio/encoding/json, strictly as decodeBytes does (no
// unknown fields, nothing after the value), and reports whether it did.
// When it did not, v is as it was and decodeBytes decodes again with
// encoding/json, whose errors name what is wrong as they always have; a
// body that either decoder takes is decoded to the same value
// (wirejson_test.go). It costs a third of encoding/json's CPU for a
// completion or a batch of specs.
func decodeFast(body []byte, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	was := reflect.New(rv.Elem().Type()).Elem()
	was.Set(rv.Elem())
	rest, err := segjson.Parse(body, v, segjson.DisallowUnknownFields)
	if err == nil && len(bytes.TrimLeft(rest, " \t\r\n")) == 0 {
		return true
	}
	rv.Elem().Set(was)
	return false
}
