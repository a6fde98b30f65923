package api

import "time"

// Costs is what fair queuing ranks jobs of equal priority by (GET
// /lanes?costs=true; docs/scheduling.md, "Fair queuing"): each fairness
// key's accumulated cost, lowest first (the next served), and the learned
// run time of each (type, resource key) that a job is charged at
// admission.
type Costs struct {
	FairnessKeys []FairKeyCost `json:"fairness_keys"`
	Learned      []LearnedCost `json:"learned"`
	// Alpha is the learning rate: estimate ← α·observed + (1−α)·estimate.
	Alpha float64 `json:"alpha"`
	// DefaultCost is the cost, in seconds, of a (type, key) never observed
	// and of a type with no default_cost.
	DefaultCost float64 `json:"default_cost"`
}

// FairKeyCost is one fairness key: its accumulated cost (seconds of
// learned run time charged to it), its pending and running jobs, and
// since when it has had none (it is forgotten key_ttl after).
type FairKeyCost struct {
	Key       string     `json:"key"`
	Cost      float64    `json:"accumulated_cost"`
	Jobs      int        `json:"jobs"`
	IdleSince *time.Time `json:"idle_since,omitempty"`
}

// LearnedCost is the learned run time of one (type, resource key), in
// seconds, and when it was last charged (it is forgotten estimate_ttl
// after).
type LearnedCost struct {
	Type     string    `json:"type"`
	Key      string    `json:"key"`
	Seconds  float64   `json:"seconds"`
	LastUsed time.Time `json:"last_used"`
}
