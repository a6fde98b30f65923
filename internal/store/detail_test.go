package store

import (
	"encoding/json"
	"errors"
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

// detailStrings are strings the events' details quote: plain, HTML
// escaped, control characters, U+2028, invalid UTF-8, quotes, DEL.
var detailStrings = []string{"", "w-1", "worker 7/éa", "w-<1>&", "a\u2028b\u2029", "bad\xffutf8", "\"q\" \\ \n\t\x01", "del\x7f", "日本"}

// The attempt events' details are encoded without encoding/json (and
// without a map), byte for byte as encoding/json encodes the map each
// stands for.
func TestAttemptDetailsAsEncodingJSON(t *testing.T) {
	same := func(what string, got json.RawMessage, v any) {
		t.Helper()
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: %s, encoding/json: %s", what, got, want)
		}
	}
	at := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	for _, s := range detailStrings {
		same("leased", LeasedEvent(1, "j", 1, "t", at, s).Detail, map[string]string{"worker": s})
		same("submitted", SubmittedEvent(1, "j", "t", at, "a", s, s+"x", -3).Detail,
			map[string]any{"type": s, "lane": s + "x", "priority": -3})
		code := len(s) - 4
		for _, class := range []FailureClass{"", FailExitCode, FailureClass(s)} {
			for _, exit := range []*int{nil, &code} {
				m := map[string]any{}
				if class != "" {
					m["class"] = class
				}
				if exit != nil {
					m["exit_code"] = *exit
				}
				if s != "" {
					m["error"] = s
				}
				if len(m) == 0 {
					m = nil
				}
				same("outcome", OutcomeDetail(class, exit, s), m)
			}
		}
	}
	for _, started := range []time.Time{
		at, at.Add(123456789), at.Add(120 * time.Millisecond), at.Add(time.Microsecond),
		at.In(time.FixedZone("x", -3600)), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		same("started", StartedEvent(1, "j", 1, "t", at, "w", started).Detail, map[string]any{"started_at": started.UTC()})
	}
	if d := StartedEvent(1, "j", 1, "t", at, "w", time.Time{}).Detail; d != nil {
		t.Errorf("a start reported on its own has detail %s", d)
	}
}

// Every drained job builds its leased, started and outcome details at
// least once: each is one allocation, its bytes (the started event's
// actor, "worker:" and the worker's id, is one more).
func TestAttemptDetailsAllocateOnce(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 123456789, time.UTC)
	code := 2
	for name, f := range map[string]func(){
		"leased":    func() { _ = LeasedEvent(1, "j", 1, "t", at, "worker-1") },
		"started":   func() { _ = StartedEvent(1, "j", 1, "t", at, "worker-1", at) },
		"outcome":   func() { _ = OutcomeDetail(FailExitCode, &code, "exit status 2") },
		"submitted": func() { _ = SubmittedEvent(1, "j", "t", at, "a", "type", "lane", 500) },
	} {
		want := 1.0
		if name == "started" {
			want = 2
		}
		if n := testing.AllocsPerRun(100, f); n > want {
			t.Errorf("%s: %.0f allocations, want %.0f", name, n, want)
		}
	}
}

// Validate parses the detail only of an event EventAppend stores: a
// synthesised event's row holds no detail, its reader rebuilds one.
func TestValidateParsesStoredDetailsOnly(t *testing.T) {
	at := time.Date(2026, 11, 26, 13, 0, 0, 0, time.UTC)
	bad := json.RawMessage(`{"worker":`)
	stored := Event{Type: EventLeased, At: at, Detail: bad}
	if err := stored.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("stored event with detail %s: %v, want ErrInvalid", bad, err)
	}
	synth := Event{ID: 1, Type: EventLeased, At: at, Detail: bad, Synthesised: true}
	if err := synth.Validate(); err != nil {
		t.Errorf("synthesised event: %v", err)
	}
	synth.ID = 0
	if err := synth.Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("synthesised event without an id: %v, want ErrInvalid", err)
	}
}
