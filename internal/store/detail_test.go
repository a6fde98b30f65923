package store

import (
	"encoding/json"
	"testing"
	"time"
)

// TestMarshalDetailAsEncodingJSON pins MarshalDetail to encoding/json's
// bytes for the shapes of the events' details.
func TestMarshalDetailAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 123456789, time.UTC)
	code := 2
	var nilMap map[string]any
	for _, v := range []any{
		map[string]string{"worker": "w-<1>&\u2028", "reason": "bad\xffutf8 \"q\" \\"},
		map[string]any{"started_at": at, "ended": at.In(time.FixedZone("x", -3600))},
		map[string]any{"class": FailExitCode, "exit_code": code, "error": "exit status 2\n<stderr>"},
		map[string]any{"type": "t", "lane": "default", "priority": 500, "tries": int64(3), "ratio": 0.1, "big": 1e21, "small": 1e-7, "f": 123456789.125},
		map[string]int{"from": 1, "to": -2}, map[string]int64{"extend_ms": 1 << 40},
		map[string]any{"name": "w", "slots": 4, "types": []string(nil), "kinds": []string{"a", "b"}, "nested": map[string]any{"z": nil, "a": true}},
		nilMap, map[string]any(nil), map[string]any{},
		struct {
			A string `json:"a,omitempty"`
			B int    `json:"b"`
		}{B: 1},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MarshalDetail(v)
		if err != nil {
			t.Fatalf("MarshalDetail(%#v): %v", v, err)
		}
		if string(got) != string(want) {
			t.Errorf("MarshalDetail(%#v) = %s, encoding/json: %s", v, got, want)
		}
	}
}
