package main

import (
	"github.com/fairwayhq/fairway/internal/bench"
)

func init() {
	commands["bench"] = command{
		summary: "benchmark a local server and workers (peerbench's workloads; docs/benchmarks.md)",
		run:     bench.Main,
	}
}
