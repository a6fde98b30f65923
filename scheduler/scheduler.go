package scheduler

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// JobType names a kind of work. Constants are defined by the application,
// not by this package, which stays agnostic of what the work is.
type JobType string

// Priority is a job type's priority. The value serves double duty (seed
// 001): higher values are dispatched first, and the value is the maximum
// number of jobs of that priority running at once. Priority(40) is a tier
// of at most 40 running jobs dispatched before Priority(10) jobs.
type Priority int

// Typical priorities for a service that mixes foreground and background work.
const (
	PriorityBackground Priority = 10 // at most 10 background jobs run at once
	PriorityForeground Priority = 40 // at most 40 foreground jobs run at once
)

// ConflictGroup names a set of job types that must not run concurrently on
// the same job ID (resource key). Types without a group conflict with nothing.
type ConflictGroup string

// JobTypeConfig is a job type's cost prior and limits.
type JobTypeConfig struct {
	// DefaultCost is the cost, in seconds of wall time, charged to a
	// fairness key for a (type, job ID) never seen before. 0 means 1.
	DefaultCost int
	// MaxConcurrency caps the running jobs of this type. 0 means no cap
	// beyond the tier and the global limit.
	MaxConcurrency int
	// ConflictGroup: two jobs of the same non-empty group never run at the
	// same time on the same job ID.
	ConflictGroup ConflictGroup
	// Priority orders dispatch (higher first) and caps the running jobs of
	// its tier at its own value. Must be >= 1.
	Priority Priority
}

// Clock is the scheduler's only source of time. Now must never go
// backwards. The real clock is used when Options.Clock is nil.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Options configures a Scheduler.
type Options struct {
	// MaxConcurrency is the number of jobs that may run at once, over all
	// types and tiers. Required, > 0.
	MaxConcurrency int
	// Alpha is the smoothing factor of the learned cost,
	// estimate = Alpha·observed + (1−Alpha)·estimate. In (0, 1]; 0 means 0.3.
	Alpha float64
	// KeyTTL forgets a fairness key's accumulated cost once it has had no
	// pending or running job for this long. 0 means 10 minutes.
	KeyTTL time.Duration
	// Clock supplies now to every scheduling decision. nil means real time.
	Clock Clock
	// Logger receives errors of background jobs and debug traces of
	// admissions. nil means slog.Default().
	Logger *slog.Logger
}

// poolID is the one policy worker that stands for the process's slots.
const poolID = "pool"

// laneName is the one lane every job runs in.
const laneName = policy.DefaultLane

// Scheduler runs Go funcs in-process under seed 001's policy: priority
// tiers with caps, per-type caps, conflict groups and cost-based fair
// queuing between fairness keys. It is safe for concurrent use. Create it
// with New and stop it with Shutdown or Close.
type Scheduler struct {
	opts  Options
	clock Clock
	log   *slog.Logger

	mu       sync.Mutex
	types    map[JobType]JobTypeConfig
	eng      *policy.Engine
	jobs     map[string]*job
	seq      uint64
	stats    map[JobType]*TypeStats
	pending  int
	running  int
	closed   bool // no more submissions
	drained  chan struct{}
	isDrain  bool // drained is closed
	watchers chan struct{}

	wake     chan struct{} // buffered(1): work arrived or capacity freed
	quit     chan struct{} // closed to stop the dispatcher
	quitOnce sync.Once
	loopDone chan struct{}
	runs     sync.WaitGroup // job goroutines
}

// New validates opts and starts the dispatcher goroutine. Register job
// types with RegisterType before submitting work; call Shutdown or Close to
// stop the dispatcher.
func New(opts Options) (*Scheduler, error) {
	if opts.MaxConcurrency <= 0 {
		return nil, fmt.Errorf("%w: max concurrency must be > 0, got %d", ErrInvalidOptions, opts.MaxConcurrency)
	}
	s := &Scheduler{
		opts:     opts,
		clock:    opts.Clock,
		log:      opts.Logger,
		types:    map[JobType]JobTypeConfig{},
		jobs:     map[string]*job{},
		stats:    map[JobType]*TypeStats{},
		drained:  make(chan struct{}),
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	eng, err := s.buildEngine()
	if err != nil {
		return nil, err
	}
	s.eng = eng
	go s.loop()
	return s, nil
}

// RegisterType declares a job type, before or after jobs were submitted.
// A type's configuration is fixed once registered.
func (s *Scheduler) RegisterType(t JobType, cfg JobTypeConfig) error {
	if err := validateType(t, cfg); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("register type %q: %w", t, ErrClosed)
	}
	if _, ok := s.types[t]; ok {
		return fmt.Errorf("%w: %q", ErrTypeRegistered, t)
	}
	if err := s.addToEngine(t, cfg); err != nil {
		return err
	}
	s.types[t] = cfg
	return nil
}

// addToEngine configures the type in the running engine, with the tier
// [N, N] capped at N of its priority unless another type made it already.
func (s *Scheduler) addToEngine(t JobType, cfg JobTypeConfig) error {
	prio := int(cfg.Priority)
	tc := policy.TypeConfig{
		DefaultCost: float64(cfg.DefaultCost), MaxConcurrency: cfg.MaxConcurrency,
		ConflictGroup: string(cfg.ConflictGroup), Priority: &prio, Lane: laneName,
	}
	if err := s.eng.SetType(string(t), tc); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidType, err)
	}
	for _, other := range s.types {
		if other.Priority == cfg.Priority {
			return nil
		}
	}
	tier := policy.TierConfig{Name: fmt.Sprintf("priority-%d", prio), MinPriority: prio, MaxPriority: prio, MaxRunning: prio}
	if err := s.eng.AddTier(tier); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidType, err)
	}
	return nil
}

func validateType(t JobType, cfg JobTypeConfig) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: empty job type name", ErrInvalidType)
	case cfg.Priority < 1:
		return fmt.Errorf("%w: %q: priority must be >= 1, got %d", ErrInvalidType, t, cfg.Priority)
	case cfg.MaxConcurrency < 0:
		return fmt.Errorf("%w: %q: max concurrency must be >= 0, got %d", ErrInvalidType, t, cfg.MaxConcurrency)
	case cfg.DefaultCost < 0:
		return fmt.Errorf("%w: %q: default cost must be >= 0, got %d", ErrInvalidType, t, cfg.DefaultCost)
	}
	return nil
}

// buildEngine configures the policy engine as seed 001: one lane with
// aging and rarity off and one worker with MaxConcurrency slots; types, and
// a tier [N, N] capped at N per distinct priority, come with RegisterType.
func (s *Scheduler) buildEngine() (*policy.Engine, error) {
	eng, err := policy.New(policy.Config{
		Lanes: map[string]policy.LaneConfig{laneName: {Weight: 1}},
		Cost:  policy.CostConfig{Alpha: s.opts.Alpha, KeyTTL: s.opts.KeyTTL},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	if err := eng.AddWorker(policy.Worker{ID: poolID, Slots: s.opts.MaxConcurrency}); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return eng, nil
}
