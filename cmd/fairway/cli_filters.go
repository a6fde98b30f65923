package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// filterFlag is how every filter flag of the CLI reads its values: the
// flag may be repeated and each value may be a comma-separated list
// (--state failed,cancelled --state blocked). Blanks around a value are
// dropped and a value given twice counts once.
//
// A filter the server matches against a list (list --state, events
// --type) sends every value. One the server matches against a single
// value takes one: two values are a usage error (single), never an empty
// answer or the last value silently kept.
type filterFlag struct {
	name    string   // the flag, "--type"
	allowed []string // the values it may take; nil: any
	values  []string
}

// list is the flag's values, checked against the allowed ones: an unknown
// one is an error that names them.
func (f *filterFlag) list() ([]string, error) {
	for _, v := range f.values {
		if f.allowed != nil && !slices.Contains(f.allowed, v) {
			noun := strings.TrimPrefix(f.name, "--")
			return nil, fmt.Errorf("%s: unknown %s %q; the %ss are %s", f.name, noun, v, noun, strings.Join(f.allowed, ", "))
		}
	}
	return f.values, nil
}

func (f *filterFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(f.values, ",")
}

func (f *filterFlag) Set(v string) error {
	parts := splitList(v)
	if len(parts) == 0 {
		return errors.New("want a value (several: repeat the flag or separate them with commas)")
	}
	for _, p := range parts {
		if !slices.Contains(f.values, p) {
			f.values = append(f.values, p)
		}
	}
	return nil
}

// single is the flag's one value ("" when it was not given); more than one
// is an error that says so.
func (f *filterFlag) single() (string, error) {
	values, err := f.list()
	switch {
	case err != nil:
		return "", err
	case len(values) == 0:
		return "", nil
	case len(values) == 1:
		return values[0], nil
	}
	return "", fmt.Errorf("%s: one value at a time (the server filters on one), got %d: %s; run the command once per value",
		f.name, len(f.values), strings.Join(f.values, ", "))
}

// singles reads single-value filters into their destinations, stopping at
// the first that has more than one value.
func singles(pairs map[*filterFlag]*string) error {
	flags := make([]*filterFlag, 0, len(pairs))
	for f := range pairs {
		flags = append(flags, f)
	}
	slices.SortFunc(flags, func(a, b *filterFlag) int { return strings.Compare(a.name, b.name) })
	for _, f := range flags {
		v, err := f.single()
		if err != nil {
			return err
		}
		*pairs[f] = v
	}
	return nil
}

// filter registers a filter flag named name on c; usage says what it keeps
// and the text on how values are read is added to it.
func (c *cli) filter(name, usage string, allowed ...string) *filterFlag {
	f := &filterFlag{name: "--" + name, allowed: allowed}
	c.fs.Var(f, name, usage)
	return f
}
