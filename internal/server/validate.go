package server

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/results"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/tracing"
)

// Limits on what a job spec may carry.
const (
	maxPayload        = 256 << 10
	maxNameLen        = 256
	maxKeyLen         = 512
	maxArgs           = 1024
	maxEnv            = 256
	maxLabels         = 64
	maxTags           = 32
	maxTagLen         = 64
	maxResultLocation = 2048
	maxDeps           = 100
	maxAttemptsCap    = 100
	defaultAttempts   = 3
)

// fieldError is a client error about one field of the request.
type fieldError struct {
	field, msg string
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func badField(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// checkTags refuses empty, overlong or repeated tags.
func checkTags(tags []string, field string) *fieldError {
	if len(tags) > maxTags {
		return badField(field, "more than %d tags", maxTags)
	}
	seen := map[string]bool{}
	for i, t := range tags {
		switch {
		case strings.TrimSpace(t) == "":
			return badField(fmt.Sprintf("%s[%d]", field, i), "is empty")
		case len(t) > maxTagLen:
			return badField(fmt.Sprintf("%s[%d]", field, i), "longer than %d characters", maxTagLen)
		case seen[t]:
			return badField(fmt.Sprintf("%s[%d]", field, i), "repeats %q", t)
		}
		seen[t] = true
	}
	return nil
}

// resolveSteps runs buildJob's checks and resolutions in turn and returns
// the first error. They are called directly, not from a list of func
// values: through those calls j would escape to the heap, one
// allocation of a whole job per submitted job.
func (s *Server) resolveSteps(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	if err := s.resolveLane(j, spec, typ); err != nil {
		return err
	}
	if err := resolvePriority(j, spec, typ); err != nil {
		return err
	}
	if err := resolveResources(j, spec, typ); err != nil {
		return err
	}
	if err := checkStrings(j, spec, typ); err != nil {
		return err
	}
	if err := resolveShell(j, spec, typ); err != nil {
		return err
	}
	if err := resolveRetry(j, spec, typ); err != nil {
		return err
	}
	if err := resolveSLA(j, spec, typ); err != nil {
		return err
	}
	if err := resolveDeps(j, spec, typ); err != nil {
		return err
	}
	if err := s.resolveOutputLimit(j, spec, typ); err != nil {
		return err
	}
	if err := s.resolveResultLocation(j, spec, typ); err != nil {
		return err
	}
	if err := resolveUnique(j, spec, typ); err != nil {
		return err
	}
	return s.resolveMaxSnoozes(j, spec, typ)
}

// buildJob validates a spec and resolves it against the config into the
// job to store, everything but id, state and times. tenant is the tenant
// the caller acts for.
func (s *Server) buildJob(spec api.JobSpec, tenant string) (store.Job, *fieldError) {
	typ, known := s.cfg.Types[spec.Type]
	if err := s.checkType(spec, known); err != nil {
		return store.Job{}, err
	}
	if !known {
		typ.AllowShell = s.cfg.Server.ShellForUnknownTypes
	}
	j := store.Job{
		Tenant: tenant, Name: spec.Name, Type: spec.Type, Key: spec.Key, FairnessKey: spec.FairnessKey,
		OnDemand: spec.OnDemand, NotPreemptible: spec.Preemptible != nil && !*spec.Preemptible, Labels: spec.Labels, Tags: spec.Tags, Command: spec.Command, Env: spec.Env, Dir: spec.Dir,
		Payload: spec.Payload, IdempotencyKey: spec.IdempotencyKey, TraceParent: spec.TraceParent,
	}
	if j.FairnessKey == "" {
		j.FairnessKey = tenant
	}
	if err := s.resolveSteps(&j, spec, typ); err != nil {
		return store.Job{}, err
	}
	if spec.RunAt != nil {
		j.RunAt = spec.RunAt.UTC()
	}
	if _, err := tracing.ParseTraceParent(spec.TraceParent); err != nil {
		return store.Job{}, &fieldError{field: "traceparent", msg: err.Error()}
	}
	return j, nil
}

func (s *Server) checkType(spec api.JobSpec, known bool) *fieldError {
	switch {
	case strings.TrimSpace(spec.Type) == "":
		return badField("type", "is required")
	case len(spec.Type) > maxNameLen:
		return badField("type", "longer than %d characters", maxNameLen)
	case !known && !s.cfg.Server.AllowUnknownTypes:
		return badField("type", "unknown job type %q (configured: %s)", spec.Type, strings.Join(slices.Sorted(maps.Keys(s.cfg.Types)), ", "))
	}
	return nil
}

func (s *Server) resolveLane(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	j.Lane = spec.Lane
	if j.Lane == "" {
		j.Lane = typ.Lane
	}
	if j.Lane == "" {
		j.Lane = policy.DefaultLane
	}
	if _, ok := s.cfg.Lanes[j.Lane]; !ok {
		return badField("lane", "unknown lane %q (configured: %s)", j.Lane, strings.Join(slices.Sorted(maps.Keys(s.cfg.Lanes)), ", "))
	}
	return nil
}

func resolvePriority(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	j.Priority = policy.DefaultPriority
	if typ.Priority != nil {
		j.Priority = *typ.Priority
	}
	if spec.Priority != nil {
		j.Priority = *spec.Priority
	}
	if j.Priority < policy.MinPriority || j.Priority > policy.MaxPriority {
		return badField("priority", "must be between %d and %d, got %d", policy.MinPriority, policy.MaxPriority, j.Priority)
	}
	return nil
}

func resolveResources(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	r := spec.Resources
	if r == nil {
		j.Resources = typ.Resources.Policy()
		return nil
	}
	switch {
	case r.CPU < 0 || math.IsNaN(r.CPU) || math.IsInf(r.CPU, 0) || r.CPU > 1e6:
		return badField("resources.cpu", "must be a number of cores between 0 and 1e6, got %v", r.CPU)
	case r.MemoryMB < 0:
		return badField("resources.memory_mb", "must be >= 0, got %d", r.MemoryMB)
	case r.GPU < 0:
		return badField("resources.gpu", "must be >= 0, got %d", r.GPU)
	}
	j.Resources = policy.Resources{MilliCPU: int64(math.Round(r.CPU * 1000)), MemoryMB: r.MemoryMB, GPU: r.GPU}
	return nil
}

func checkStrings(j *store.Job, spec api.JobSpec, _ config.Type) *fieldError {
	switch {
	case len(spec.Name) > maxNameLen:
		return badField("name", "longer than %d characters", maxNameLen)
	case len(spec.Key) > maxKeyLen:
		return badField("key", "longer than %d characters", maxKeyLen)
	case len(spec.FairnessKey) > maxKeyLen:
		return badField("fairness_key", "longer than %d characters", maxKeyLen)
	case len(spec.IdempotencyKey) > maxKeyLen:
		return badField("idempotency_key", "longer than %d characters", maxKeyLen)
	case len(spec.Command) > maxArgs:
		return badField("command", "more than %d arguments", maxArgs)
	case len(spec.Env) > maxEnv:
		return badField("env", "more than %d variables", maxEnv)
	case len(spec.Labels) > maxLabels:
		return badField("labels", "more than %d labels", maxLabels)
	case len(spec.Tags) > maxTags:
		return badField("tags", "more than %d tags", maxTags)
	case len(spec.Payload) > maxPayload:
		return badField("payload", "larger than %d bytes", maxPayload)
	}
	for i, l := range spec.Labels {
		if strings.TrimSpace(l) == "" {
			return badField(fmt.Sprintf("labels[%d]", i), "is empty")
		}
	}
	if err := checkTags(spec.Tags, "tags"); err != nil {
		return err
	}
	for k, v := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			return badField("env", "invalid variable %q: names must be non-empty without '=' or NUL", k)
		}
	}
	for i, a := range spec.Command {
		if strings.Contains(a, "\x00") {
			return badField(fmt.Sprintf("command[%d]", i), "contains a NUL byte")
		}
	}
	return nil
}

func resolveShell(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	if !spec.Shell {
		return nil
	}
	if !typ.AllowShell {
		return badField("shell", "job type %q does not allow shell commands (set types.%s.allow_shell: true in the server config, or pass the command as an argument list)", spec.Type, spec.Type)
	}
	if len(spec.Command) == 0 {
		return badField("command", "is required with shell")
	}
	j.Shell = true
	return nil
}

func resolveRetry(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	j.MaxAttempts = defaultAttempts
	if typ.MaxAttempts > 0 {
		j.MaxAttempts = typ.MaxAttempts
	}
	if spec.MaxAttempts != 0 {
		j.MaxAttempts = spec.MaxAttempts
	}
	if j.MaxAttempts < 1 || j.MaxAttempts > maxAttemptsCap {
		return badField("max_attempts", "must be between 1 and %d, got %d", maxAttemptsCap, j.MaxAttempts)
	}
	j.Retry = store.RetryPolicy{Kind: store.RetryExponential, Delay: time.Second, MaxDelay: time.Minute, Jitter: true}
	if r := typ.Retry; r != nil {
		j.Retry = store.RetryPolicy{Kind: store.RetryKind(r.Kind), Delay: r.Delay.D(), MaxDelay: r.MaxDelay.D(), Jitter: r.Jitter, RetryOn: classes(r.RetryOn)}
	}
	r := spec.Retry
	if r == nil {
		return nil
	}
	if err := config.ValidRetryKind(r.Kind); err != nil {
		return badField("retry.kind", "%v", err)
	}
	if r.DelayMS < 0 || r.MaxDelayMS < 0 {
		return badField("retry.delay_ms", "delays must be >= 0")
	}
	for i, c := range r.RetryOn {
		if !config.ValidFailureClass(c) {
			return badField(fmt.Sprintf("retry.retry_on[%d]", i), "unknown failure class %q", c)
		}
	}
	j.Retry = store.RetryPolicy{Kind: store.RetryKind(r.Kind), Delay: ms(r.DelayMS), MaxDelay: ms(r.MaxDelayMS), Jitter: r.Jitter, RetryOn: classes(r.RetryOn)}
	if j.Retry.Kind == "" {
		j.Retry.Kind = store.RetryFixed
	}
	return nil
}

func resolveSLA(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	if spec.TimeoutMS < 0 {
		return badField("timeout_ms", "must be >= 0, got %d", spec.TimeoutMS)
	}
	if spec.ExpectedMS < 0 {
		return badField("expected_ms", "must be >= 0, got %d", spec.ExpectedMS)
	}
	if !config.ValidSLAPolicy(spec.SLAPolicy) {
		return badField("sla_policy", "must be strict, flexible or warning_only, got %q", spec.SLAPolicy)
	}
	j.Timeout, j.Expected, j.SLAPolicy = typ.Timeout.D(), typ.Expected.D(), store.SLAPolicy(typ.SLAPolicy)
	if spec.TimeoutMS > 0 {
		j.Timeout = ms(spec.TimeoutMS)
	}
	if spec.ExpectedMS > 0 {
		j.Expected = ms(spec.ExpectedMS)
	}
	if spec.SLAPolicy != "" {
		j.SLAPolicy = store.SLAPolicy(spec.SLAPolicy)
	}
	if j.SLAPolicy == "" {
		j.SLAPolicy = store.SLAStrict
	}
	return nil
}

// resolveOutputLimit takes the job's output limit, else the type's, else
// the server's; a job may ask for up to server.max_output_limit.
func (s *Server) resolveOutputLimit(j *store.Job, spec api.JobSpec, typ config.Type) *fieldError {
	def, ceiling := s.cfg.Server.OutputLimits()
	if l := spec.OutputLimitBytes; l != 0 && (l < int64(config.MinOutputLimit) || l > int64(ceiling)) {
		return badField("output_limit_bytes", "must be between %d and %d (server.max_output_limit), got %d", config.MinOutputLimit, ceiling, l)
	}
	j.OutputLimit = int64(def)
	if typ.OutputLimit != 0 {
		j.OutputLimit = int64(typ.OutputLimit)
	}
	if spec.OutputLimitBytes != 0 {
		j.OutputLimit = spec.OutputLimitBytes
	}
	return nil
}

func resolveDeps(j *store.Job, spec api.JobSpec, _ config.Type) *fieldError {
	if len(spec.DependsOn) > maxDeps {
		return badField("depends_on", "more than %d dependencies", maxDeps)
	}
	for i, d := range spec.DependsOn {
		c := store.Condition(d.Condition)
		if c == "" {
			c = store.CondSuccess
		}
		if d.JobID == "" {
			return badField(fmt.Sprintf("depends_on[%d].job_id", i), "is required")
		}
		if !c.Valid() {
			return badField(fmt.Sprintf("depends_on[%d].condition", i), "must be success, failure or any, got %q", d.Condition)
		}
		j.DependsOn = append(j.DependsOn, store.Dependency{JobID: d.JobID, Condition: c})
	}
	return nil
}

func classes(cs []string) []store.FailureClass {
	var out []store.FailureClass
	for _, c := range cs {
		out = append(out, store.FailureClass(c))
	}
	return out
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// resolveResultLocation checks result_location: a URL this build writes
// to, under one of server.results.allow when that is set.
func (s *Server) resolveResultLocation(j *store.Job, spec api.JobSpec, _ config.Type) *fieldError {
	if spec.ResultLocation == "" {
		return nil
	}
	if len(spec.ResultLocation) > maxResultLocation {
		return badField("result_location", "longer than %d characters", maxResultLocation)
	}
	loc, err := results.ParseLocation(spec.ResultLocation)
	if err != nil {
		return badField("result_location", "%s", strings.TrimPrefix(err.Error(), results.ErrLocation.Error()+": "))
	}
	if !results.Within(loc, s.resultAllow) {
		allowed := make([]string, len(s.resultAllow))
		for i, a := range s.resultAllow {
			allowed[i] = a.String()
		}
		return badField("result_location", "%s is not under an allowed location (server.results.allow: %s)",
			loc, strings.Join(allowed, ", "))
	}
	j.ResultLocation = spec.ResultLocation
	return nil
}
