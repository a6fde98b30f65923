package policy

import (
	"cmp"
	"slices"
	"time"
)

// FairKeyCost is one fairness key as fair queuing sees it: the cost its
// admitted jobs have accumulated (ranked lowest first among equal
// priorities), and how many of its jobs the engine holds.
type FairKeyCost struct {
	Key       string
	Cost      float64
	Jobs      int       // pending and running jobs of the key
	IdleSince time.Time // zero while it has jobs; it is forgotten KeyTTL after
}

// LearnedCost is the learned run time of one (type, resource key): the
// cost a job of that pair is charged at admission.
type LearnedCost struct {
	Type, Key string
	Seconds   float64
	LastUsed  time.Time // it is forgotten EstimateTTL after
}

// FairKeyCosts lists the fairness keys the engine holds at now, lowest
// accumulated cost first (the next to be served among equal priorities),
// then by name; keys idle for KeyTTL are left out, as the next decision
// would forget them.
func (e *Engine) FairKeyCosts(now time.Time) []FairKeyCost {
	out := make([]FairKeyCost, 0, len(e.keys))
	for _, fk := range e.keys {
		if fk.jobs == 0 && now.Sub(fk.idleSince) >= e.cfg.Cost.KeyTTL {
			continue
		}
		c := FairKeyCost{Key: fk.name, Cost: fk.cost, Jobs: fk.jobs}
		if fk.jobs == 0 {
			c.IdleSince = fk.idleSince
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b FairKeyCost) int {
		return cmp.Or(cmp.Compare(a.Cost, b.Cost), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// LearnedCosts lists the learned costs at now by type then key; those
// unused for EstimateTTL are left out, as the next decision would forget
// them.
func (e *Engine) LearnedCosts(now time.Time) []LearnedCost {
	out := make([]LearnedCost, 0, len(e.costs.est))
	for id, est := range e.costs.est {
		if now.Sub(est.lastUsed) >= e.costs.cfg.EstimateTTL {
			continue
		}
		out = append(out, LearnedCost{Type: id.typ, Key: id.key, Seconds: est.value, LastUsed: est.lastUsed})
	}
	slices.SortFunc(out, func(a, b LearnedCost) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Key, b.Key))
	})
	return out
}
