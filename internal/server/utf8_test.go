package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

func TestJSONPathAtNamesTheMember(t *testing.T) {
	for body, want := range map[string]string{
		"{\"payload\": {\"p\": \"a\xff\"}}":                     "payload.p",
		"{\"payload\": {\"p\xff\": \"x\"}}":                     "payload.p\uFFFD",
		"{\"type\": \"a\", \"command\": [\"ok\", \"b\xffd\"]}":  "command[1]",
		"{\"env\": {\"A\": \"1\", \"B\": \"\xfe\"}}":            "env.B",
		"{\"jobs\": [{\"type\": \"a\"}, {\"name\": \"\xff\"}]}": "jobs[1].name",
	} {
		b := []byte(body)
		if got := jsonPathAt(b, firstInvalidUTF8(b)); got != want {
			t.Errorf("%q: path %q, want %q", body, got, want)
		}
	}
}

func TestInvalidUTF8IsRefusedAndNeverStored(t *testing.T) {
	h := newHarness(t, defaultConfig())
	for path, body := range map[string]string{
		"/jobs":       "{\"type\": \"a\", \"payload\": {\"p\xff\": \"\xff\"}}",
		"/jobs/batch": "{\"jobs\": [{\"type\": \"a\", \"name\": \"n\xc3\"}]}",
	} {
		var r api.ErrorResponse
		if code := h.do("POST", path, body, &r); code != http.StatusBadRequest || r.Error.Code != api.CodeInvalidUTF8 || r.Error.Field == "" {
			t.Errorf("POST %s: HTTP %d %+v, want 400 invalid_utf8 naming the field", path, code, r.Error)
		}
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("refused jobs were stored: %+v", list.Jobs)
	}
	raw, _ := json.Marshal(list)
	if !json.Valid(raw) {
		t.Fatal("list is not valid JSON")
	}
}
