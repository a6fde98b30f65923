package sim

import (
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

// Kind is what happened to a job.
type Kind uint8

// Event kinds, in the order they happen to one job.
const (
	Arrive       Kind = iota // the job was submitted
	Reprioritize             // its priority changed while pending
	Admit                    // the engine admitted it on a worker
	Done                     // it ran to completion (outcome succeeded)
	Cancel                   // it was cancelled, pending or running
	Drop                     // the engine dropped it: a dependency can never succeed
	Preempt                  // it was stopped for a waiting job and queued again with its age
	Snooze                   // its run ended snoozed: blocked until its delay has passed, then ready again
)

var kindNames = [...]string{"arrive", "reprioritize", "admit", "done", "cancel", "drop", "preempt", "snooze"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Event is one line of the timeline. Fields not meaningful for a kind are
// zero: Worker is set on admit, done and the cancel of a running job; Score,
// Cost and Wait on admit; Ran on done and the cancel of a running job.
type Event struct {
	At          time.Duration // virtual time since the start of the scenario
	Kind        Kind
	ID          string
	Type        string
	Key         string
	FairnessKey string // effective: the tenant when the job names none
	Tenant      string
	Lane        string
	Priority    int // base priority in force (after any reprioritize)
	OnDemand    bool
	Resources   policy.Resources // effective demand (the type's when the job names none)
	Worker      string
	Score       int64         // admit: score at admission, priority points
	Cost        float64       // admit: cost charged to the fairness key
	Wait        time.Duration // admit: admission time minus ready time
	Ran         time.Duration // done/cancel: time spent running
	Dependency  string        // drop: the dependency that failed
	For         string        // preempt: the waiting job it was stopped for
}

// T is the event time in seconds.
func (e Event) T() float64 { return e.At.Seconds() }
