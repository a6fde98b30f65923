package config

import (
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration that YAML spells "30s" or 30 (seconds).
type Duration time.Duration

// UnmarshalYAML accepts a duration string or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var secs float64
	if err := n.Decode(&secs); err == nil {
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return &nodeError{n.Line, n.Column, fmt.Sprintf("must be a non-negative duration, got %v", secs)}
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return &nodeError{n.Line, n.Column, "must be a duration like 30s or a number of seconds"}
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return &nodeError{n.Line, n.Column, fmt.Sprintf("must be a non-negative duration like 30s, got %q", s)}
	}
	*d = Duration(v)
	return nil
}

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// nodeError is a value error at a place in the YAML document; Load turns
// the place into the field's path.
type nodeError struct {
	line, col int
	msg       string
}

func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// pathAt returns the dotted key path of the value at line:col.
func pathAt(n *yaml.Node, line, col int) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := pathAt(c, line, col); p != "" {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Line == line && v.Column == col {
				return k.Value
			}
			if sub := pathAt(v, line, col); sub != "" {
				return k.Value + "." + sub
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			if v.Line == line && v.Column == col {
				return fmt.Sprintf("[%d]", i)
			}
			if sub := pathAt(v, line, col); sub != "" {
				return fmt.Sprintf("[%d].%s", i, sub)
			}
		}
	}
	return ""
}
