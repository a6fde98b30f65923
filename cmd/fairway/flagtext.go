package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Go's flag package speaks of flags with one dash ("-limit") and names Go
// types in its help ("-limit int"); fairway's docs and messages use two
// dashes, so its errors and help are rewritten here.

// flagErrors match the errors of flag.FlagSet.Parse.
var (
	errUndefined  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	errBadValue   = regexp.MustCompile(`^invalid value "(.*)" for flag -+([^:]*): (.*)$`)
	errBadBoolean = regexp.MustCompile(`^invalid boolean value "(.*)" for -+([^:]*): (.*)$`)
	errNoArgument = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagError says a parse error of fs in fairway's words.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := errUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := errBadValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s: %s, got %q", m[2], valueWant(fs.Lookup(m[2]), m[3]), m[1])
	}
	if m := errBadBoolean.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s takes no value (or =true, =false), got %q", m[2], m[1])
	}
	if m := errNoArgument.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	return msg
}

// valueWant turns the flag package's "parse error" into what the flag
// wants; a flag.Value's own error is kept.
func valueWant(f *flag.Flag, reason string) string {
	if f == nil || (reason != "parse error" && reason != "value out of range") {
		return reason
	}
	kind := fmt.Sprintf("%T", f.Value)
	switch {
	case reason == "value out of range":
		return "out of range"
	case strings.Contains(kind, "duration"):
		return "want a duration such as 90s, 10m or 1h30m"
	case strings.Contains(kind, "int"), strings.Contains(kind, "uint"):
		return "want a whole number"
	case strings.Contains(kind, "float"):
		return "want a number"
	}
	return reason
}

// printFlags writes fs's flags as "--name VALUE" with their help, as
// flag.PrintDefaults does but as fairway's flags are typed: two dashes
// (one for a one-letter flag, -f), a placeholder that says what to give
// rather than a Go type, and the default once (a help that names its
// default itself is left as it is).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if len(f.Name) == 1 {
			line = "  -" + f.Name
		}
		if name != "" {
			line += " " + placeholder(name)
		}
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		fmt.Fprintf(w, "%s\n    \t%s", line, usage)
		if !isZeroDefault(f) && !strings.Contains(usage, "(default") {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

// placeholder replaces the Go type name the flag package gives a flag's
// value when its help names none (`NAME` in backquotes) by the letter the
// docs use: S for text, N for a whole number, X for a number, D for a
// duration, V for another value.
func placeholder(name string) string {
	switch name {
	case "string":
		return "S"
	case "int", "uint", "int64", "uint64":
		return "N"
	case "float", "float64":
		return "X"
	case "duration":
		return "D"
	case "value":
		return "V"
	}
	return name
}

func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// parseCommandFlags parses the flags of a command that is not an API
// client (server, dev, worker, sim, bench): -h prints "usage: fairway
// NAME SYNOPSIS", a sentence on what the command does, and its flags; a
// bad flag is one line and a pointer to -h. It returns -1 to go on, else
// the exit code to stop with.
func parseCommandFlags(fs *flag.FlagSet, synopsis, about string, args []string, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return -1
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stderr, "usage: fairway %s %s\n\n%s\n\nflags:\n", fs.Name(), synopsis, about)
		printFlags(stderr, fs)
		return exitOK
	}
	fmt.Fprintf(stderr, "fairway %s: %s\nRun 'fairway %s -h' for usage.\n", fs.Name(), flagError(fs, err), fs.Name())
	return exitUsage
}
