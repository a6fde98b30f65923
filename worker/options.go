package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/fairwayhq/fairway/client"
)

// Defaults for zero Options fields.
const (
	DefaultPollWait         = 30 * time.Second
	MaxPollWait             = 60 * time.Second
	DefaultLogFlushInterval = 100 * time.Millisecond
	DefaultBatchWindow      = 2 * time.Millisecond
	DefaultDrainTimeout     = 30 * time.Second
	DefaultRequestTimeout   = 30 * time.Second
	DefaultMinBackoff       = 100 * time.Millisecond
	DefaultMaxBackoff       = 10 * time.Second
)

// Options configure a Worker. Handlers and one of Client and Transport
// are required.
type Options struct {
	// Client is the server over HTTP.
	Client *client.Client
	// Transport, instead of Client, is any other way to the server: an
	// embedded server's in-process transport (package embedded).
	Transport Transport
	// Name is a label for operators; default hostname-pid.
	Name string
	// Types are the job types to ask for. Empty: the keys of Handlers, or
	// every type when Handlers has a "*" entry.
	Types  []string
	Labels []string
	// Slots is how many jobs run at once; default runtime.GOMAXPROCS(0).
	Slots int
	// CPU, MemoryMB and GPU are the capacity offered to the scheduler.
	CPU      float64
	MemoryMB int64
	GPU      int64
	// Handlers run jobs by type; a "*" entry runs every other type.
	Handlers map[string]Handler
	// PollWait is how long one lease request waits for work; default 30s,
	// at most 60s.
	PollWait time.Duration
	// LogFlushInterval is how long output is buffered before it is sent
	// (sooner when 64 KiB are buffered); default 100ms.
	LogFlushInterval time.Duration
	// BatchWindow is how long a completion report waits for others
	// to share its request; default 2ms, negative: no wait.
	BatchWindow time.Duration
	// DrainTimeout is how long running jobs may finish once Run's ctx is
	// done, before they are cancelled; default 30s. (Stop takes its own.)
	DrainTimeout time.Duration
	// RequestTimeout bounds each request to the server other than the
	// lease long poll (which gets PollWait more); default 30s.
	RequestTimeout time.Duration
	// MinBackoff and MaxBackoff bound the retry delays after a failed
	// request; defaults 100ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// Logger receives the worker's own log; default slog.Default().
	Logger *slog.Logger
}

// withDefaults validates o and fills in its zero fields.
func (o Options) withDefaults() (Options, error) {
	if err := o.validate(); err != nil {
		return o, err
	}
	o.Name = defaultString(o.Name, defaultName())
	o.Slots = defaultInt(o.Slots, runtime.GOMAXPROCS(0))
	o.PollWait = min(defaultDuration(o.PollWait, DefaultPollWait), MaxPollWait)
	o.LogFlushInterval = defaultDuration(o.LogFlushInterval, DefaultLogFlushInterval)
	if o.BatchWindow == 0 {
		o.BatchWindow = DefaultBatchWindow
	}
	o.DrainTimeout = defaultDuration(o.DrainTimeout, DefaultDrainTimeout)
	o.RequestTimeout = defaultDuration(o.RequestTimeout, DefaultRequestTimeout)
	o.MinBackoff = defaultDuration(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = max(defaultDuration(o.MaxBackoff, DefaultMaxBackoff), o.MinBackoff)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if len(o.Types) == 0 && o.Handlers["*"] == nil {
		o.Types = slices.Sorted(maps.Keys(o.Handlers))
	}
	return o, nil
}

func (o Options) validate() error {
	switch {
	case o.Client == nil && o.Transport == nil:
		return errors.New("worker: Options.Client (or Transport) is required")
	case o.Client != nil && o.Transport != nil:
		return errors.New("worker: set Options.Client or Options.Transport, not both")
	case len(o.Handlers) == 0:
		return errors.New("worker: Options.Handlers is empty")
	case o.Slots < 0:
		return fmt.Errorf("worker: negative Slots (%d)", o.Slots)
	case o.CPU < 0 || o.MemoryMB < 0 || o.GPU < 0:
		return errors.New("worker: negative capacity")
	}
	for typ, h := range o.Handlers {
		if h == nil {
			return fmt.Errorf("worker: nil handler for type %q", typ)
		}
	}
	return nil
}

func defaultName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

func defaultString(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func defaultInt(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

func defaultDuration(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// transport is the way to the server: Transport, else Client.
func (o Options) transport() Transport {
	if o.Transport != nil {
		return o.Transport
	}
	return o.Client
}
