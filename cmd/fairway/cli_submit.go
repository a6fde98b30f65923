package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

func init() {
	commands["submit"] = command{summary: "submit a job (--wait: follow its logs to its end)", run: runSubmit}
}

const submitAbout = `Submits a job of TYPE that runs COMMAND (given after --) and prints its id.
With --wait it then follows the job: its stdout and stderr are copied to
fairway's, state changes are shown on stderr, and the exit status says how it
ended (0 succeeded, 1 failed or cancelled).`

// submitFlags are submit's own flags.
type submitFlags struct {
	tenant, name, lane, key, fairnessKey string
	priority                             optionalInt
	onDemand, shell, wait                bool
	notPreemptible                       bool
	cpu                                  float64
	memoryMB, gpu                        int64
	labels, env, after, tags             stringList
	resultLocation                       string
	dir, idempotencyKey, traceParent     string
	maxAttempts, maxSnoozes              int
	retry                                string
	retryDelay, retryMaxDelay            time.Duration
	timeout, expected                    time.Duration
	sla, runAt, payload                  string
	outputLimit                          byteSizeFlag
	uniqueBy, uniqueStates, uniquePeriod string
}

// byteSizeFlag is a flag spelled like config sizes: 64KiB, 10MB, 4096.
type byteSizeFlag int64

func (b *byteSizeFlag) String() string {
	if *b == 0 {
		return ""
	}
	return config.ByteSize(*b).String()
}

func (b *byteSizeFlag) Set(s string) error {
	v, err := config.ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSizeFlag(v)
	return nil
}

// register registers submit's flags: the job template's and those that
// only a submit takes.
func (f *submitFlags) register(fs *flag.FlagSet) {
	f.registerTemplate(fs)
	fs.StringVar(&f.idempotencyKey, "idempotency-key", "", "a resubmit with the same key within 24 h returns the first job")
	fs.StringVar(&f.traceParent, "traceparent", os.Getenv("TRACEPARENT"), "run the job in this W3C trace `context` (default: $TRACEPARENT, so a job's own submits join its trace)")
	fs.StringVar(&f.runAt, "run-at", "", "not before this `time`: RFC 3339, or +DURATION from now")
	fs.Var(&f.after, "after", "run after job `ID[:condition]` ends; condition success (default), failure or any (repeatable)")
	fs.BoolVar(&f.wait, "wait", false, "follow the job: stream its logs and state, exit 0 on success, 1 on failure")
	fs.StringVar(&f.uniqueBy, "unique-by", "", "`FIELDS` (type,key,payload,tenant,lane) that make two jobs the same: a submit matching a job in --unique-states returns it")
	fs.StringVar(&f.uniqueStates, "unique-states", "", "`STATES` the matching job must be in (default: every unfinished state)")
	fs.StringVar(&f.uniquePeriod, "unique-period", "", "only a matching job created less than `DURATION` ago counts (default: any age)")
}

// registerTemplate registers the flags of a job template, which a
// schedule's jobs share: not --idempotency-key, --run-at, --after or
// --wait, which only a submit takes.
func (f *submitFlags) registerTemplate(fs *flag.FlagSet) {
	fs.StringVar(&f.tenant, "tenant", "", "tenant (admin keys and open servers only)")
	fs.StringVar(&f.name, "name", "", "a label for people")
	fs.StringVar(&f.lane, "lane", "", "lane (default: the type's)")
	fs.StringVar(&f.key, "key", "", "resource key: what the job works on (conflicts, cost learning)")
	fs.StringVar(&f.fairnessKey, "fairness-key", "", "whose consumption it counts against (default: the tenant)")
	fs.Var(&f.priority, "priority", "priority `N`, 0..1000, higher first (default: the type's, else 500)")
	fs.BoolVar(&f.onDemand, "on-demand", false, "a caller is waiting: jump ahead within the anti-starvation bounds")
	fs.BoolVar(&f.notPreemptible, "not-preemptible", false, "never stop this job, once running, for a job of higher priority (lanes with preemption on)")
	fs.Float64Var(&f.cpu, "cpu", 0, "cpu cores it needs (default: the type's)")
	fs.Int64Var(&f.memoryMB, "memory-mb", 0, "memory in MB it needs (default: the type's)")
	fs.Int64Var(&f.gpu, "gpu", 0, "GPUs it needs (default: the type's)")
	fs.Var(&f.labels, "label", "worker `label` it needs (repeatable)")
	fs.Var(&f.tags, "tag", "a `tag` for people and list filters (repeatable)")
	fs.Var(&f.env, "env", "environment variable `K=V` (repeatable)")
	fs.StringVar(&f.dir, "dir", "", "working directory on the worker")
	fs.BoolVar(&f.shell, "shell", false, "run COMMAND through the shell (if the type allows it)")
	fs.IntVar(&f.maxAttempts, "max-attempts", 0, "attempts before it fails for good (default: the type's, else 3)")
	fs.IntVar(&f.maxSnoozes, "max-snoozes", 0, "times it may snooze ($FAIRWAY_SNOOZE_FILE, worker.Snooze) before a snooze fails it (default: server.max_snoozes)")
	fs.StringVar(&f.retry, "retry", "", "retry back-off: fixed, exponential or immediate")
	fs.DurationVar(&f.retryDelay, "retry-delay", 0, "delay before a retry (the first, for exponential)")
	fs.DurationVar(&f.retryMaxDelay, "retry-max-delay", 0, "cap of the exponential back-off (default 1h)")
	fs.DurationVar(&f.timeout, "timeout", 0, "max run time (SLA limit)")
	fs.DurationVar(&f.expected, "expected", 0, "expected run time (SLA warning)")
	fs.StringVar(&f.sla, "sla", "", "SLA policy: strict (kill at --timeout), flexible or warning_only")
	fs.StringVar(&f.payload, "payload", "", "JSON payload for SDK handlers: inline, @FILE to read a file, - to read stdin")
	fs.Var(&f.outputLimit, "output-limit", "output `SIZE` kept (64KiB, 10MB...): past it the head and tail are kept (default: the type's, else the server's)")
	fs.StringVar(&f.resultLocation, "result-location", "", "where each attempt's output and result.json go: file:///DIR or s3://BUCKET/PREFIX")
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("submit", "TYPE [flags] [-- COMMAND [ARG...]]", submitAbout, stdout, stderr)
	var f submitFlags
	f.register(c.fs)
	pos, command, code := c.parse(args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return c.usageErr("want one job TYPE and the command after --, got %d argument(s) before --", len(pos))
	}
	spec, err := f.spec(pos[0], command, time.Now())
	if err != nil {
		return c.usageErr("%v", err)
	}
	cl, code := c.client()
	if code >= 0 {
		return code
	}
	res, err := cl.Submit(ctx, spec)
	if err != nil {
		return c.fail(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(c.stderr, "fairway: warning: %s\n", w)
	}
	if f.wait {
		return c.follow(ctx, cl, res)
	}
	return c.done(c.printSubmitted(res))
}

func (c *cli) printSubmitted(res api.SubmitResponse) error {
	if c.json {
		return c.printJSON(res)
	}
	if m := res.UniqueMatch; m != nil {
		fmt.Fprintf(c.stderr, "fairway: unique rule (by %s, states %s) matched job %s, which already exists (%s)\n",
			strings.Join(m.By, ","), strings.Join(m.States, ","), res.Job.ID, res.Job.State)
	} else if res.Deduplicated {
		fmt.Fprintf(c.stderr, "fairway: idempotency key seen before: job %s already exists (%s)\n", res.Job.ID, res.Job.State)
	}
	_, err := fmt.Fprintln(c.stdout, res.Job.ID)
	return err
}

// spec builds the job spec from the flags; an error is a usage error.
func (f *submitFlags) spec(typ string, command []string, now time.Time) (api.JobSpec, error) {
	s := api.JobSpec{
		Type: typ, Tenant: f.tenant, Name: f.name, Lane: f.lane, Key: f.key, FairnessKey: f.fairnessKey,
		OnDemand: f.onDemand, Labels: f.labels, Tags: f.tags, ResultLocation: f.resultLocation, Command: command, Shell: f.shell, Dir: f.dir,
		IdempotencyKey: f.idempotencyKey, TraceParent: f.traceParent, MaxAttempts: f.maxAttempts, MaxSnoozes: f.maxSnoozes, SLAPolicy: f.sla,
		TimeoutMS: f.timeout.Milliseconds(), ExpectedMS: f.expected.Milliseconds(),
		OutputLimitBytes: int64(f.outputLimit),
	}
	if f.priority.set {
		p := f.priority.v
		s.Priority = &p
	}
	if f.notPreemptible {
		s.Preemptible = new(bool)
	}
	if f.cpu != 0 || f.memoryMB != 0 || f.gpu != 0 {
		s.Resources = &api.Resources{CPU: f.cpu, MemoryMB: f.memoryMB, GPU: f.gpu}
	}
	var err error
	if err = f.check(); err != nil {
		return s, err
	}
	if s.Env, err = parseEnv(f.env); err != nil {
		return s, err
	}
	if s.RunAt, err = parseRunAt(f.runAt, now); err != nil {
		return s, err
	}
	if s.DependsOn, err = parseAfter(f.after); err != nil {
		return s, err
	}
	s.Retry = f.retryPolicy()
	if s.Unique, err = f.uniqueRule(); err != nil {
		return s, err
	}
	if s.Payload, err = readPayload(f.payload); err != nil {
		return s, err
	}
	return s, nil
}

// check validates the flags whose values are a closed set or a format.
func (f *submitFlags) check() error {
	switch {
	case !slices.Contains([]string{"", "fixed", "exponential", "immediate"}, f.retry):
		return fmt.Errorf("--retry: want fixed, exponential or immediate, got %q", f.retry)
	case !slices.Contains([]string{"", "strict", "flexible", "warning_only"}, f.sla):
		return fmt.Errorf("--sla: want strict, flexible or warning_only, got %q", f.sla)
	case f.retryDelay < 0 || f.retryMaxDelay < 0 || f.timeout < 0 || f.expected < 0:
		return errors.New("--retry-delay, --retry-max-delay, --timeout and --expected must not be negative")
	}
	return nil
}

// stdin is what --payload - reads (a test replaces it).
var stdin io.Reader = os.Stdin

// maxPayloadRead bounds what --payload @FILE and - read: the server takes
// payloads up to 256 KiB and request bodies up to 1 MiB.
const maxPayloadRead = 1 << 20

// readPayload reads --payload: inline JSON, @FILE or - for stdin. An
// empty value is no payload.
func readPayload(v string) (json.RawMessage, error) {
	var (
		data []byte
		err  error
		flag = "--payload"
	)
	switch {
	case v == "":
		return nil, nil
	case v == "-":
		flag = "--payload -"
		data, err = io.ReadAll(io.LimitReader(stdin, maxPayloadRead+1))
	case strings.HasPrefix(v, "@"):
		flag = "--payload " + v
		if v == "@" {
			return nil, errors.New("--payload @: want @FILE, the file that holds the JSON")
		}
		data, err = readFileLimited(v[1:], maxPayloadRead+1)
	default:
		data = []byte(v)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", flag, err)
	case len(data) > maxPayloadRead:
		return nil, fmt.Errorf("%s: more than 1 MiB; the server takes payloads up to 256 KiB", flag)
	case !json.Valid(data):
		return nil, fmt.Errorf("%s: not valid JSON", flag)
	}
	return json.RawMessage(data), nil
}

// readFileLimited reads at most n bytes of the file at path.
func readFileLimited(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// uniqueRule builds the unique rule of --unique-by, --unique-states and
// --unique-period; nil without --unique-by.
func (f *submitFlags) uniqueRule() (*api.UniqueRule, error) {
	if f.uniqueBy == "" {
		if f.uniqueStates != "" || f.uniquePeriod != "" {
			return nil, errors.New("--unique-states and --unique-period need --unique-by (the fields that make two jobs the same, e.g. type,key)")
		}
		return nil, nil
	}
	r := &api.UniqueRule{By: splitList(f.uniqueBy), States: splitList(f.uniqueStates)}
	if f.uniquePeriod != "" {
		d, err := time.ParseDuration(f.uniquePeriod)
		if err != nil || d < time.Millisecond {
			return nil, fmt.Errorf("--unique-period: want a duration of at least 1ms such as 10m or 24h, got %q", f.uniquePeriod)
		}
		r.PeriodMS = new(d.Milliseconds())
	}
	return r, nil
}

func (f *submitFlags) retryPolicy() *api.RetryPolicy {
	if f.retry == "" && f.retryDelay == 0 && f.retryMaxDelay == 0 {
		return nil
	}
	return &api.RetryPolicy{Kind: f.retry, DelayMS: f.retryDelay.Milliseconds(), MaxDelayMS: f.retryMaxDelay.Milliseconds()}
}

func parseEnv(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	env := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env: want K=V, got %q", kv)
		}
		env[k] = v
	}
	return env, nil
}

// parseRunAt reads an RFC 3339 time or +DURATION from now.
func parseRunAt(s string, now time.Time) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("--run-at: want RFC 3339 or +DURATION (e.g. +10m), got %q", s)
		}
		t := now.Add(d).UTC()
		return &t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("--run-at: want RFC 3339 (e.g. 2026-11-21T07:00:00Z) or +DURATION, got %q", s)
	}
	t = t.UTC()
	return &t, nil
}

// parseAfter reads --after ID[:condition] values.
func parseAfter(vals []string) ([]api.Dependency, error) {
	var deps []api.Dependency
	for _, v := range vals {
		id, cond, _ := strings.Cut(v, ":")
		if id == "" || !slices.Contains([]string{"", "success", "failure", "any"}, cond) {
			return nil, fmt.Errorf("--after: want ID or ID:success|failure|any, got %q", v)
		}
		deps = append(deps, api.Dependency{JobID: id, Condition: cond})
	}
	return deps, nil
}
