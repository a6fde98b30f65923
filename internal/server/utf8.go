package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fairwayhq/fairway/api"
)

// invalidUTF8 is the answer to a body that is not UTF-8 (RFC 8259 §8.1).
// Go's JSON decoder would quietly turn the bad bytes into U+FFFD, or keep
// them in a json.RawMessage (a payload) and echo them back as invalid JSON
// to every reader of the job, so such a body is refused, naming the field
// that holds the first bad byte.
func invalidUTF8(body []byte) *apiError {
	off := firstInvalidUTF8(body)
	field := jsonPathAt(body, off)
	where := "the body"
	if field != "" {
		where = "field " + strconv.Quote(field)
	}
	ae := errf(http.StatusBadRequest, api.CodeInvalidUTF8,
		"%s holds invalid UTF-8 at byte %d: JSON text must be UTF-8 (encode binary data, e.g. as base64)", where, off)
	ae.body.Field = field
	return ae
}

// firstInvalidUTF8 is the offset of the first byte of b that does not
// start a valid UTF-8 sequence, or len(b).
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// pathFrame is one open object or array while walking JSON tokens.
type pathFrame struct {
	object    bool
	key       string // object: the current member's key
	expectKey bool   // object: the next token is a key
	index     int    // array: the current element
}

// jsonPathAt names the member whose key or value holds byte off of body,
// as a dotted path with [i] for array elements ("payload.items[2]"); "" if
// the byte is outside every member or the body is not JSON enough to say.
func jsonPathAt(body []byte, off int) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []pathFrame
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		past := dec.InputOffset() > int64(off)
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].expectKey {
			if _, isKey := tok.(string); isKey {
				stack[top].key, stack[top].expectKey = tok.(string), false
				if past {
					return pathOf(stack)
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, pathFrame{object: true, expectKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, pathFrame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		default:
			if past {
				return pathOf(stack)
			}
		}
		valueDone(stack)
	}
}

// valueDone moves the innermost open container past the value just read.
func valueDone(stack []pathFrame) {
	if len(stack) == 0 {
		return
	}
	top := &stack[len(stack)-1]
	if top.object {
		top.expectKey = true
	} else {
		top.index++
	}
}

func pathOf(stack []pathFrame) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case f.object && f.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(strings.ToValidUTF8(f.key, "\uFFFD"))
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}
