package sqlstore

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzFastStrings: whenever the fast path accepts an input, encoding/json
// decodes it to the same value.
func FuzzFastStrings(f *testing.F) {
	for _, seed := range []string{`[]`, `{}`, `["a","b"]`, `{"k":"v","x":""}`, `["a\"b"]`, `["é ✓"]`,
		`[ "a" ]`, `["a",]`, `{"k"}`, `{"k":"v",}`, `["a":"b"]`, `{"a","b"}`, `[""]`, `"x"`, `[`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kv, ok := fastStrings(b, nil)
		if !ok {
			return
		}
		if b[0] == '[' {
			var want []string
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("fast path accepted %q, encoding/json: %v", b, err)
			}
			if diff := cmp.Diff(want, kv); len(want)+len(kv) > 0 && diff != "" {
				t.Fatalf("%q (-json +fast):\n%s", b, diff)
			}
			return
		}
		var want map[string]string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", b, err)
		}
		got := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			got[kv[i]] = kv[i+1]
		}
		if diff := cmp.Diff(want, got); len(want)+len(got) > 0 && diff != "" {
			t.Fatalf("%q (-json +fast):\n%s", b, diff)
		}
	})
}

func TestFastStringsRoundTrip(t *testing.T) {
	for _, ss := range [][]string{{"a"}, {"python", "/app/x.py", "--flag=1", "ünï ✓"}, {"", ""}} {
		b, _ := json.Marshal(ss)
		got, ok := fastStrings(b, nil)
		if !ok || !cmp.Equal(ss, got) {
			t.Errorf("%s: %v %v", b, got, ok)
		}
	}
	b, _ := json.Marshal([]string{"<html>", `a"b`})
	if _, ok := fastStrings(b, nil); ok {
		t.Errorf("%s: escapes must take the slow path", b)
	}
}
