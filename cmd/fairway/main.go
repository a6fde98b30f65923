// Command fairway is the job server, the pull worker, the CLI and the
// simulator in one binary. Each subcommand lives in its own file and
// registers itself in commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: run receives the arguments after its name.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands is filled by init functions of the subcommand files.
var commands = map[string]command{}

func main() {
	ctx, stop := interrupts()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// forceKey is the context key of the channel closed at a second interrupt.
type forceKey struct{}

// interrupts returns a context that ends at the first SIGINT or SIGTERM
// (a graceful stop) and whose forced channel closes at the second (stop
// now). A third signal kills the process the default way.
func interrupts() (context.Context, func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel()
		if _, ok := <-sigs; !ok {
			return
		}
		close(force)
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	}()
	return context.WithValue(ctx, forceKey{}, force), func() {
		signal.Stop(sigs)
		cancel()
	}
}

// forced returns a channel closed at the second interrupt (nil, which
// blocks forever, when the context has none: tests).
func forced(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(forceKey{}).(chan struct{})
	return ch
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "fairway: unknown command %q%s; run 'fairway help' for the list of commands\n", args[0], suggestion(args[0]))
		return 2
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

// suggestion is ` (did you mean "status"?)` for a name one or two edits
// away from a command, else "".
func suggestion(name string) string {
	best, bestDist := "", 3
	for n := range commands {
		if d := editDistance(name, n); d < bestDist || d == bestDist && n < best {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: fairway <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'fairway <command> -h' for a command's flags, 'fairway --version' for the version.")
}
