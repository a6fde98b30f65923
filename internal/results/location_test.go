package results

import (
	"errors"
	"testing"
	"time"
)

func TestParseLocation(t *testing.T) {
	good := []struct{ raw, shown, attempt string }{
		{"file:///srv/results", "file:///srv/results", "file:///srv/results/j1/attempt-2/"},
		{"file:///srv/results/../out/", "file:///srv/out", "file:///srv/out/j1/attempt-2/"},
		{"file://localhost/srv/r", "file:///srv/r", "file:///srv/r/j1/attempt-2/"},
		{"s3://bucket", "s3://bucket/", "s3://bucket/j1/attempt-2/"},
		{"s3://bucket/nightly/reports/?region=eu-west-1", "s3://bucket/nightly/reports/", "s3://bucket/nightly/reports/j1/attempt-2/"},
	}
	for _, c := range good {
		loc, err := ParseLocation(c.raw)
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if loc.String() != c.shown || loc.AttemptURL("j1", 2) != c.attempt {
			t.Errorf("%s: shown %q, attempt %q; want %q, %q", c.raw, loc, loc.AttemptURL("j1", 2), c.shown, c.attempt)
		}
	}
	bad := []string{
		"", "/srv/results", "relative/dir", "file://host/srv", "file:relative", "file:///srv?create_dir=1",
		"s3://", "s3://user:secret@bucket/p", "s3://bucket?prefix=x/", "http://example.com/results", "gs://bucket",
		"%zz",
	}
	for _, raw := range bad {
		if _, err := ParseLocation(raw); !errors.Is(err, ErrLocation) {
			t.Errorf("%q: want ErrLocation, got %v", raw, err)
		}
	}
}

func TestWithin(t *testing.T) {
	mustParse := func(raw string) Location {
		loc, err := ParseLocation(raw)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	allowed := []Location{mustParse("file:///srv/results"), mustParse("s3://bucket/team-a?region=eu-west-1")}
	cases := map[string]bool{
		"file:///srv/results":                   true,
		"file:///srv/results/nightly":           true,
		"file:///srv/results/../../etc":         false,
		"file:///srv/results-other":             false,
		"file:///tmp":                           false,
		"s3://bucket/team-a/x?region=eu-west-1": true,
		"s3://bucket/team-a?region=eu-west-1":   true,
		"s3://bucket/team-ab?region=eu-west-1":  false,
		"s3://bucket/team-a/x":                  false, // another client configuration
		"s3://other/team-a?region=eu-west-1":    false,
	}
	for raw, want := range cases {
		if got := Within(mustParse(raw), allowed); got != want {
			t.Errorf("Within(%s) = %v, want %v", raw, got, want)
		}
	}
	if !Within(mustParse("file:///anything"), nil) {
		t.Error("an empty allow list allows every location")
	}
}

func TestRetryDelayDoublesUpToTheCap(t *testing.T) {
	o := Options{Backoff: time.Second, MaxBackoff: 10 * time.Second}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for i, w := range want {
		if got := RetryDelay(o, i+1); got != w {
			t.Errorf("after try %d: %v, want %v", i+1, got, w)
		}
	}
}
