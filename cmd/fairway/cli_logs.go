package main

import (
	"context"
	"encoding/json"
	"io"
	"slices"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func init() {
	commands["logs"] = command{summary: "print a job's output (-f: follow it)", run: runLogs}
}

const logsAbout = `Prints a job's output: what it wrote to stdout goes to stdout, what it wrote
to stderr to stderr. With -f it keeps following until the job has ended.
--json prints {"chunks": [...]}; with -f, one JSON object per line: each
chunk, then {"state": ...} when the job ends.`

// logsFlags are logs' own flags.
type logsFlags struct {
	follow bool
	opts   client.LogOptions
}

func (f *logsFlags) register(c *cli) {
	c.fs.BoolVar(&f.follow, "f", false, "follow: print new output as it comes, until the job ends")
	c.fs.BoolVar(&f.follow, "follow", false, "same as -f")
	c.fs.IntVar(&f.opts.Attempt, "attempt", 0, "only this attempt (default: all)")
	c.fs.StringVar(&f.opts.Stream, "stream", "", "only this stream: stdout or stderr (default: both)")
}

func runLogs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("logs", "ID [flags]", logsAbout, stdout, stderr)
	var f logsFlags
	f.register(c)
	pos, code := c.parseN(args, 1, "one job ID")
	if code >= 0 {
		return code
	}
	if !slices.Contains([]string{"", "stdout", "stderr"}, f.opts.Stream) {
		return c.usageErr("--stream: want stdout or stderr, got %q", f.opts.Stream)
	}
	if f.opts.Attempt < 0 {
		return c.usageErr("--attempt: must not be negative")
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	if f.follow {
		return c.followLogs(ctx, cl, pos[0], f.opts)
	}
	return c.printLogs(ctx, cl, pos[0], f.opts)
}

// printLogs prints every chunk there is now.
func (c *cli) printLogs(ctx context.Context, cl *client.Client, id string, opts client.LogOptions) int {
	emit := chunkPrinter(c.stdout, c.stderr)
	all := api.LogList{Chunks: []api.LogChunk{}}
	if c.json {
		emit = func(ch api.LogChunk) error {
			all.Chunks = append(all.Chunks, ch)
			return nil
		}
	}
	err := cl.LogsAll(ctx, id, opts, emit)
	if err == nil && c.json {
		err = c.printJSON(all)
	}
	return c.done(err)
}

// followLogs prints chunks as they come until the job ends.
func (c *cli) followLogs(ctx context.Context, cl *client.Client, id string, opts client.LogOptions) int {
	emit := chunkPrinter(c.stdout, c.stderr)
	enc := json.NewEncoder(c.stdout)
	enc.SetEscapeHTML(false)
	if c.json {
		emit = func(ch api.LogChunk) error { return enc.Encode(ch) }
	}
	end, err := cl.FollowLogs(ctx, id, opts, emit)
	if err != nil {
		return c.stopped(id, err)
	}
	if c.json {
		return c.done(enc.Encode(end))
	}
	return exitOK
}

// chunkPrinter copies a chunk's data to stdout or stderr, as the job wrote it.
func chunkPrinter(stdout, stderr io.Writer) func(api.LogChunk) error {
	return func(ch api.LogChunk) error {
		w := stdout
		if ch.Stream == "stderr" {
			w = stderr
		}
		_, err := io.WriteString(w, ch.Data)
		return err
	}
}
