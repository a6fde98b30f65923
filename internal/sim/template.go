package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// template is a string with {i} and {i%M} placeholders, parsed once so that
// rendering a million copies allocates only the result.
type template struct {
	parts []tpart
	vars  int
}

// tpart is a literal, or the copy index modulo mod (0: the index itself).
type tpart struct {
	lit   string
	isVar bool
	mod   int
}

// parseTemplate splits s into literals and placeholders. A brace that does
// not open {i} or {i%M} is literal text; {i% not followed by a positive
// integer and } is an error.
func parseTemplate(s string) (template, error) {
	var t template
	for {
		k := strings.Index(s, "{i")
		if k < 0 {
			t.addLit(s)
			return t, nil
		}
		t.addLit(s[:k])
		rest := s[k+2:]
		switch {
		case strings.HasPrefix(rest, "}"):
			t.parts = append(t.parts, tpart{isVar: true})
			t.vars++
			s = rest[1:]
		case strings.HasPrefix(rest, "%"):
			mod, n, err := parseMod(rest[1:])
			if err != nil {
				return t, err
			}
			t.parts = append(t.parts, tpart{isVar: true, mod: mod})
			t.vars++
			s = rest[1+n:]
		default:
			t.addLit("{i")
			s = rest
		}
	}
}

// parseMod reads "M}" and returns M and the bytes consumed.
func parseMod(s string) (int, int, error) {
	end := strings.IndexByte(s, '}')
	if end < 0 {
		return 0, 0, fmt.Errorf("unterminated placeholder {i%%%s: want {i} or {i%%M}", s)
	}
	m, err := strconv.Atoi(s[:end])
	if err != nil || m <= 0 {
		return 0, 0, fmt.Errorf("placeholder {i%%%s}: M must be a positive integer", s[:end])
	}
	return m, end + 1, nil
}

func (t *template) addLit(s string) {
	if s == "" {
		return
	}
	if n := len(t.parts); n > 0 && !t.parts[n-1].isVar {
		t.parts[n-1].lit += s
		return
	}
	t.parts = append(t.parts, tpart{lit: s})
}

// render substitutes copy index i.
func (t template) render(i int) string {
	switch {
	case len(t.parts) == 0:
		return ""
	case t.vars == 0:
		return t.parts[0].lit
	}
	buf := make([]byte, 0, 32)
	for _, p := range t.parts {
		if !p.isVar {
			buf = append(buf, p.lit...)
			continue
		}
		v := i
		if p.mod > 0 {
			v = i % p.mod
		}
		buf = strconv.AppendInt(buf, int64(v), 10)
	}
	return string(buf)
}
