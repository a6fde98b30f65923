package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a number of bytes that YAML spells 1048576, "1MiB" or "1MB"
// (KiB, MiB, GiB are powers of 1024; KB, MB, GB of 1000; B or no unit is
// bytes).
type ByteSize int64

// byteUnits maps a unit suffix to its multiplier; longest suffixes first so
// that "MiB" is not read as "B".
var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// ParseByteSize reads "10MiB", "64KB", "512" or "512B".
func ParseByteSize(s string) (ByteSize, error) {
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(strings.ToUpper(num), strings.ToUpper(u.suffix)) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("must be a size like 10MiB, 64KB or a number of bytes, got %q", s)
	}
	return ByteSize(v * mult), nil
}

// UnmarshalYAML accepts a number of bytes or a size string.
func (b *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseByteSize(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &nodeError{n.Line, n.Column, fmt.Sprintf("must be a size like 10MiB, 64KB or a number of bytes, got %q", n.Value)}
	}
	*b = v
	return nil
}

// String spells the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range []struct {
		suffix string
		mult   ByteSize
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.mult && b%u.mult == 0 {
			return fmt.Sprintf("%d%s", b/u.mult, u.suffix)
		}
	}
	return fmt.Sprintf("%dB", int64(b))
}
