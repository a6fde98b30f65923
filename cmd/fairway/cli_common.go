package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/fairwayhq/fairway/client"
)

// Exit codes of the API commands (docs/cli.md).
const (
	exitOK          = 0
	exitJobFailed   = 1 // submit --wait: the job failed or was cancelled
	exitUsage       = 2
	exitNotFound    = 3
	exitAPI         = 4 // the server refused the request (4xx other than 404)
	exitUnavailable = 5 // the server cannot be reached, or answered 5xx
	exitInterrupted = 130
)

// Defaults of the common flags.
const (
	envServer = "FAIRWAY_SERVER"
	envAPIKey = "FAIRWAY_API_KEY"
	// envRequestTimeout and envRetryDeadline override the client's
	// bounds (client.WithRequestTimeout, client.WithRetryDeadline).
	envRequestTimeout = "FAIRWAY_REQUEST_TIMEOUT"
	envRetryDeadline  = "FAIRWAY_RETRY_DEADLINE"
	defaultServer     = "http://127.0.0.1:7070"
)

// cli is one run of an API command: its flags (the common ones plus its
// own) and where it writes.
type cli struct {
	name     string
	synopsis string // what follows "fairway NAME" in the usage line
	about    string
	fs       *flag.FlagSet
	server   string
	apiKey   string
	json     bool
	stdout   io.Writer
	stderr   io.Writer
}

func newCLI(name, synopsis, about string, stdout, stderr io.Writer) *cli {
	c := &cli{name: name, synopsis: synopsis, about: about, stdout: stdout, stderr: stderr}
	c.fs = flag.NewFlagSet(name, flag.ContinueOnError)
	c.fs.SetOutput(io.Discard) // errors are printed by parse, usage by printUsage
	c.fs.StringVar(&c.server, "server", "", "server `URL`; several instances comma-separated (default $"+envServer+", else "+defaultServer+")")
	c.fs.StringVar(&c.apiKey, "api-key", "", "API `key` (default $"+envAPIKey+")")
	c.fs.BoolVar(&c.json, "json", false, "print the API's JSON instead of text")
	return c
}

// parse reads flags placed before, between or after the positional
// arguments. Arguments after a "--" are returned apart, in rest. code is -1
// to go on, else the exit code to stop with (0 after -h).
func (c *cli) parse(args []string) (pos, rest []string, code int) {
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printUsage()
				return nil, nil, exitOK
			}
			return nil, nil, c.usageErr("%s", flagError(c.fs, err))
		}
		left := c.fs.Args()
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			return pos, left, -1
		}
		if len(left) == 0 {
			return pos, nil, -1
		}
		pos = append(pos, left[0])
		args = left[1:]
	}
}

// parseN parses args for a command that takes exactly n positional
// arguments (a "--" only protects arguments that look like flags).
func (c *cli) parseN(args []string, n int, what string) ([]string, int) {
	pos, rest, code := c.parse(args)
	if code >= 0 {
		return nil, code
	}
	pos = append(pos, rest...)
	if len(pos) != n {
		return nil, c.usageErr("want %s, got %d argument(s)", what, len(pos))
	}
	return pos, -1
}

func (c *cli) printUsage() {
	fmt.Fprintf(c.stderr, "usage: fairway %s %s\n\n%s\n\nflags:\n", c.name, c.synopsis, c.about)
	printFlags(c.stderr, c.fs)
}

// usageErr reports a usage error and returns exitUsage.
func (c *cli) usageErr(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "fairway: %s: %s\nRun 'fairway %s -h' for usage.\n", c.name, fmt.Sprintf(format, args...), c.name)
	return exitUsage
}

// client makes the API client from the common flags.
// oneJob parses a command's single job ID and makes its client. A code
// >= 0 means the command ends with it.
func (c *cli) oneJob(args []string) (string, *client.Client, int) {
	return c.oneID(args, "one job ID")
}

// oneID is oneJob for a command whose one argument is what.
func (c *cli) oneID(args []string, what string) (string, *client.Client, int) {
	pos, code := c.parseN(args, 1, what)
	if code >= 0 {
		return "", nil, code
	}
	cl, code := c.client()
	if code >= 0 {
		return "", nil, code
	}
	return pos[0], cl, -1
}

func (c *cli) client() (*client.Client, int) {
	server := firstNonEmpty(c.server, os.Getenv(envServer), defaultServer)
	key := firstNonEmpty(c.apiKey, os.Getenv(envAPIKey))
	if err := checkAPIKey(key); err != nil {
		source := "--api-key"
		if c.apiKey == "" {
			source = "$" + envAPIKey
		}
		return nil, c.usageErr("%s: %v", source, err)
	}
	opts := []client.Option{client.WithAPIKey(key), client.WithUserAgent("fairway-cli/1")}
	for _, bound := range []struct {
		env string
		opt func(time.Duration) client.Option
	}{{envRequestTimeout, client.WithRequestTimeout}, {envRetryDeadline, client.WithRetryDeadline}} {
		v := os.Getenv(bound.env)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, c.usageErr("$%s: want a duration such as 10s, got %q", bound.env, v)
		}
		opts = append(opts, bound.opt(d))
	}
	cl, err := client.New(server, opts...)
	if err != nil {
		return nil, c.usageErr("--server: %v", err)
	}
	c.server = cl.BaseURL()
	return cl, -1
}

// checkAPIKey refuses a key that cannot be sent in an HTTP header: one
// with a control character, typically the newline of a second line
// captured along with the secret.
func checkAPIKey(key string) error {
	for i, r := range key {
		if r < ' ' || r == 0x7f {
			return fmt.Errorf("the key holds a control character (%q at byte %d); pass the secret alone, on one line", r, i)
		}
	}
	return nil
}

// fail prints err and returns the exit code for it: 3 for not found, 4
// for another refusal, 5 when the server is unreachable or failed, 130
// when interrupted.
func (c *cli) fail(err error) int {
	code := exitCodeFor(err)
	switch code {
	case exitInterrupted:
		fmt.Fprintln(c.stderr, "fairway: interrupted")
	case exitUnavailable:
		if errors.Is(err, client.ErrNotFairway) {
			fmt.Fprintf(c.stderr, "fairway: %v; check --server / %s\n", err, envServer)
			break
		}
		if _, isAPI := client.APIError(err); !isAPI {
			fmt.Fprintf(c.stderr, "fairway: cannot reach the server at %s: %v\n", c.server, err)
			break
		}
		fallthrough
	default:
		fmt.Fprintf(c.stderr, "fairway: %v\n", err)
	}
	return code
}

func exitCodeFor(err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	e, ok := client.APIError(err)
	switch {
	case !ok:
		return exitUnavailable
	case e.Status == 404:
		return exitNotFound
	case e.Status >= 500:
		return exitUnavailable
	}
	return exitAPI
}

// done returns exitOK for a nil error, else fail(err).
func (c *cli) done(err error) int {
	if err != nil {
		return c.fail(err)
	}
	return exitOK
}

// printJSON writes v as indented JSON on stdout.
func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table returns a tabwriter for aligned columns on stdout; Flush it.
func (c *cli) table() *tabwriter.Writer {
	return tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
}

// tableRow writes tab-separated cells and a newline.
func tableRow(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// timeText shows a time in UTC to the second, "-" when unset.
func timeText(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC") // always name the zone
}

// msText shows a millisecond count as a duration.
func msText(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// dashIfEmpty shows "-" for an empty cell.
func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// optionalInt is an int flag that knows whether it was given.
type optionalInt struct {
	v   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.v)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not an integer")
	}
	o.v, o.set = n, true
	return nil
}

// verbFunc runs one verb of a command with subcommands.
type verbFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// runVerbs runs the verb args[0] of the command name ("schedule", "keys"):
// without one, or with -h, it prints "usage: fairway NAME SYNOPSIS" and
// about (exit 2 without, 0 with -h); an unknown one is a usage error
// naming the verbs.
func runVerbs(ctx context.Context, name, synopsis, about string, verbs map[string]verbFunc, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: fairway %s %s\n\n%s\n", name, synopsis, about)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	verb, ok := verbs[args[0]]
	if !ok {
		names := make([]string, 0, len(verbs))
		for n := range verbs {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(stderr, "fairway: %s: unknown verb %q; the verbs are %s\n", name, args[0], strings.Join(names, ", "))
		return exitUsage
	}
	return verb(ctx, args[1:], stdout, stderr)
}
