package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/fairwayhq/fairway/internal/sim"
)

func init() {
	commands["sim"] = command{summary: "run a scenario file through the engine in virtual time", run: runSim}
}

// simFlags are the sim subcommand's options.
type simFlags struct {
	format string
	quiet  bool
	until  float64
	file   string
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, code := parseSimFlags(args, stderr)
	if code >= 0 {
		return code
	}
	sc, err := loadScenario(f.file)
	if err != nil {
		fmt.Fprintf(stderr, "fairway sim: %v\n", err)
		return 2
	}
	out := bufio.NewWriterSize(stdout, 64<<10)
	w, err := sim.NewWriter(f.format, out)
	if err != nil {
		fmt.Fprintf(stderr, "fairway sim: --format: %v\n", err)
		return 2
	}
	opt := sim.Options{Stop: time.Duration(f.until * 1e9)}
	if !f.quiet {
		opt.Sink = w.Event
	}
	res, err := sim.RunContext(ctx, sc, opt)
	if err == nil {
		err = w.Summary(res.Summary)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return simExit(err, stderr)
}

func simExit(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, sim.ErrScenario):
		fmt.Fprintf(stderr, "fairway sim: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "fairway sim: %v\n", err)
	return 1
}

// parseSimFlags reads flags placed before or after FILE. It returns code
// -1 to go on, or the exit code to stop with.
func parseSimFlags(args []string, stderr io.Writer) (simFlags, int) {
	var f simFlags
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.StringVar(&f.format, "format", "text", "output format: text (timeline and table) or jsonl (one JSON object per event, then the summary)")
	fs.BoolVar(&f.quiet, "quiet", false, "print the summary only")
	fs.Float64Var(&f.until, "until", 0, "stop the virtual clock at `SECONDS` (0: run until no event is left)")
	const about = "Runs a scenario file (docs/simulator.md) through the scheduling engine in virtual time.\nFILE may be - for standard input."
	var files []string
	for {
		if code := parseCommandFlags(fs, "[--format text|jsonl] [--quiet] [--until SECONDS] FILE", about, args, stderr); code >= 0 {
			return f, code
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return f, checkSimFlags(&f, files, stderr)
}

func checkSimFlags(f *simFlags, files []string, stderr io.Writer) int {
	switch {
	case len(files) != 1:
		fmt.Fprintf(stderr, "fairway sim: want exactly one scenario FILE, got %d\n", len(files))
		return 2
	case f.format != "text" && f.format != "jsonl":
		fmt.Fprintf(stderr, "fairway sim: --format: unknown format %q (want text or jsonl)\n", f.format)
		return 2
	case math.IsNaN(f.until) || f.until < 0 || f.until > 1e9:
		fmt.Fprintf(stderr, "fairway sim: --until: must be a number of seconds in [0, 1e9]\n")
		return 2
	}
	f.file = files[0]
	return -1
}

func loadScenario(path string) (*sim.Scenario, error) {
	if path == "-" {
		return sim.Load(os.Stdin)
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc, err := sim.Load(bufio.NewReader(fh))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}
