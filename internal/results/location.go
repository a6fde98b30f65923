package results

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Location is a parsed result location.
type Location struct {
	scheme string
	bucket string // what gocloud opens: scheme, bucket (or directory) and query
	prefix string // key prefix inside the bucket: "" or ending in "/"
	shown  string // the location without its query, to show
}

// Schemes are the result location schemes this build writes to.
var Schemes = []string{"file", "s3"}

// ErrLocation is wrapped by every error ParseLocation returns.
var ErrLocation = errors.New("bad result location")

// ParseLocation checks a result location URL: file:///an/absolute/dir (no
// query) or s3://bucket[/prefix][?s3 options].
func ParseLocation(raw string) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, fmt.Errorf("%w: %q is not a URL", ErrLocation, raw)
	}
	switch u.Scheme {
	case "file":
		return parseFile(u)
	case "s3":
		return parseS3(u)
	case "":
		return Location{}, fmt.Errorf("%w: %q has no scheme; want file:///a/directory or s3://bucket/prefix", ErrLocation, raw)
	}
	return Location{}, fmt.Errorf("%w: scheme %q is not supported; want one of %s", ErrLocation, u.Scheme, strings.Join(Schemes, ", "))
}

func parseFile(u *url.URL) (Location, error) {
	switch {
	case u.Host != "" && u.Host != "localhost":
		return Location{}, fmt.Errorf("%w: file URL names host %q; want file:///an/absolute/directory", ErrLocation, u.Host)
	case u.Opaque != "" || !strings.HasPrefix(u.Path, "/"):
		return Location{}, fmt.Errorf("%w: file URL needs an absolute directory, as in file:///srv/results", ErrLocation)
	case u.RawQuery != "" || u.Fragment != "":
		return Location{}, fmt.Errorf("%w: file URL takes no query or fragment", ErrLocation)
	}
	dir := path.Clean(u.Path)
	return Location{
		scheme: "file",
		bucket: (&url.URL{Scheme: "file", Path: dir, RawQuery: "create_dir=1&metadata=skip&no_tmp_dir=1"}).String(),
		shown:  (&url.URL{Scheme: "file", Path: dir}).String(),
	}, nil
}

func parseS3(u *url.URL) (Location, error) {
	q := u.Query()
	switch {
	case u.Host == "":
		return Location{}, fmt.Errorf("%w: s3 URL names no bucket; want s3://bucket/prefix", ErrLocation)
	case u.User != nil:
		return Location{}, fmt.Errorf("%w: s3 URL carries credentials; give them to the server's environment instead", ErrLocation)
	case q.Has("prefix") || q.Has("key"):
		return Location{}, fmt.Errorf("%w: put the prefix in the path (s3://bucket/prefix), not in a query parameter", ErrLocation)
	case u.Fragment != "":
		return Location{}, fmt.Errorf("%w: s3 URL takes no fragment", ErrLocation)
	}
	prefix := strings.Trim(path.Clean("/"+u.Path), "/")
	if prefix != "" {
		prefix += "/"
	}
	return Location{
		scheme: "s3",
		bucket: (&url.URL{Scheme: "s3", Host: u.Host, RawQuery: u.RawQuery}).String(),
		prefix: prefix,
		shown:  (&url.URL{Scheme: "s3", Host: u.Host, Path: "/" + prefix}).String(),
	}, nil
}

// String is the location as shown: without its query.
func (l Location) String() string { return l.shown }

// attemptDir is the key prefix of an attempt's objects.
func (l Location) attemptDir(jobID string, attempt int) string {
	return l.prefix + jobID + "/attempt-" + strconv.Itoa(attempt) + "/"
}

// AttemptURL is where an attempt's objects go, as shown to people.
func (l Location) AttemptURL(jobID string, attempt int) string {
	return strings.TrimSuffix(l.shown, "/") + "/" + strings.TrimPrefix(l.attemptDir(jobID, attempt), l.prefix)
}

// Within reports whether loc lies under one of allowed (every location
// does when allowed is empty): same scheme and bucket (or directory), and
// a key prefix that starts with the allowed one at a path boundary. An s3
// location's query must match the allowed one's.
func Within(loc Location, allowed []Location) bool {
	if len(allowed) == 0 {
		return true
	}
	for _, a := range allowed {
		switch {
		case a.scheme != loc.scheme:
		case a.scheme == "file" && dirWithin(loc.shown, a.shown):
			return true
		case a.scheme == "s3" && a.bucket == loc.bucket && strings.HasPrefix(loc.prefix, a.prefix):
			return true
		}
	}
	return false
}

// dirWithin reports whether the file URL dir is base or below it.
func dirWithin(dir, base string) bool {
	return dir == base || strings.HasPrefix(dir, strings.TrimSuffix(base, "/")+"/")
}
