package main

import (
	"bytes"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/internal/config"
)

func TestGCFloorLoweredUnderGOMEMLIMIT(t *testing.T) {
	prev := debug.SetMemoryLimit(200 << 20)
	defer debug.SetMemoryLimit(prev)
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	if got := gcFloor(config.Default().Server, log); got != 100<<20 {
		t.Errorf("gcFloor under GOMEMLIMIT=200MiB = %d, want 100 MiB", got)
	}
	if !strings.Contains(buf.String(), `msg="gc floor lowered" floor=100MiB configured=256MiB by="half of GOMEMLIMIT"`) {
		t.Errorf("log = %q, want the lowering named", buf.String())
	}
	debug.SetMemoryLimit(math.MaxInt64)
	buf.Reset()
	off := config.ByteSize(0)
	cfg := config.Default().Server
	cfg.GCFloor = &off
	if got := gcFloor(cfg, log); got != 0 || buf.Len() != 0 {
		t.Errorf("gc_floor 0: gcFloor = %d, log %q; want 0 and nothing logged", got, buf.String())
	}
}
