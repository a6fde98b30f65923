package main

import (
	"fmt"
	"runtime/debug"
)

// versionLine says which fairway this is: the module version (a release
// tag, or "(devel)" for a build from a checkout), the VCS revision and
// time the binary was built from when the build recorded them, and the Go
// version.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "fairway (unknown version: built without module information)"
	}
	line := "fairway " + info.Main.Version
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		line += fmt.Sprintf(" (revision %.12s%s, %s)", rev, dirty, at)
	}
	return line + " " + info.GoVersion
}
