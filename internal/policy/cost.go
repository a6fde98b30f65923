package policy

import (
	"math"
	"time"
)

// fairKey is one fairness key's accumulated cost. It lives while the key
// has jobs in the engine and for KeyTTL after it goes idle.
type fairKey struct {
	name      string
	cost      float64
	jobs      int // entries of this key the engine holds, running included
	idleSince time.Time
}

type idleMark struct {
	fk *fairKey
	at time.Time
}

// fairKey returns the key, creating it at zero (or at the active minimum
// when AdvanceNewKeys is set).
func (e *Engine) fairKey(name string) *fairKey {
	if fk, ok := e.keys[name]; ok {
		return fk
	}
	fk := &fairKey{name: name}
	if e.cfg.Cost.AdvanceNewKeys {
		fk.cost = e.minActiveCost()
	}
	e.keys[name] = fk
	return fk
}

func (e *Engine) minActiveCost() float64 {
	min := math.Inf(1)
	for _, fk := range e.keys {
		if fk.jobs > 0 && fk.cost < min {
			min = fk.cost
		}
	}
	if math.IsInf(min, 1) {
		return 0
	}
	return min
}

func (e *Engine) keyGained(fk *fairKey) { fk.jobs++ }

func (e *Engine) keyLost(fk *fairKey, now time.Time) {
	fk.jobs--
	if fk.jobs == 0 {
		fk.idleSince = now
		e.idleKeys.push(idleMark{fk, now})
	}
}

// evictIdleKeys forgets keys idle for KeyTTL. Marks are appended in time
// order (now never goes back), so the queue is a FIFO.
func (e *Engine) evictIdleKeys(now time.Time) {
	ttl := e.cfg.Cost.KeyTTL
	for e.idleKeys.len() > 0 && now.Sub(e.idleKeys.front().at) >= ttl {
		m := e.idleKeys.pop()
		if m.fk.jobs == 0 && m.fk.idleSince.Equal(m.at) && e.keys[m.fk.name] == m.fk {
			delete(e.keys, m.fk.name)
		}
	}
}

// AccumulatedCost is the fairness key's accumulated cost as the engine
// holds it (0 if unknown). An idle key is evicted at the first decision
// after KeyTTL; AccumulatedCostAt answers as if that had happened.
func (e *Engine) AccumulatedCost(key string) float64 {
	if fk, ok := e.keys[key]; ok {
		return fk.cost
	}
	return 0
}

// AccumulatedCostAt is the fairness key's accumulated cost at now: 0 for a
// key the engine does not know or that has been idle for KeyTTL.
func (e *Engine) AccumulatedCostAt(key string, now time.Time) float64 {
	fk, ok := e.keys[key]
	if !ok || (fk.jobs == 0 && now.Sub(fk.idleSince) >= e.cfg.Cost.KeyTTL) {
		return 0
	}
	return fk.cost
}

// costBook holds the learned cost of each (type, resource key): an
// exponential moving average of observed wall time in seconds.
type costBook struct {
	cfg     CostConfig
	est     map[estID]*estimate
	touched fifo[estMark]
}

type estID struct{ typ, key string }

type estimate struct {
	value    float64
	lastUsed time.Time
}

type estMark struct {
	id estID
	at time.Time
}

func newCostBook(cfg CostConfig) costBook {
	return costBook{cfg: cfg, est: map[estID]*estimate{}}
}

// lookup is the cost to charge for (typ, key): its estimate, else the
// type's default, else the global default.
func (b *costBook) lookup(t *jobType, key string, now time.Time) float64 {
	if est, ok := b.est[estID{t.name, key}]; ok {
		est.lastUsed = now
		return est.value
	}
	if t.cfg.DefaultCost > 0 {
		return t.cfg.DefaultCost
	}
	return b.cfg.DefaultCost
}

func (b *costBook) set(typ, key string, value float64, now time.Time) {
	id := estID{typ, key}
	est, ok := b.est[id]
	if !ok {
		est = &estimate{}
		b.est[id] = est
		b.touched.push(estMark{id, now})
	}
	est.value, est.lastUsed = value, now
}

// observe folds an observed run time into the estimate:
// est ← α·observed + (1−α)·est, starting from prior.
func (b *costBook) observe(typ, key string, observed, prior float64, now time.Time) {
	prev := prior
	if est, ok := b.est[estID{typ, key}]; ok {
		prev = est.value
	}
	b.set(typ, key, b.cfg.Alpha*observed+(1-b.cfg.Alpha)*prev, now)
}

// evict drops estimates unused for EstimateTTL. A mark whose estimate was
// used since goes to the back with its new time; the queue may then be
// slightly out of order, which only delays an eviction, never hastens it.
func (b *costBook) evict(now time.Time) {
	ttl := b.cfg.EstimateTTL
	for b.touched.len() > 0 && now.Sub(b.touched.front().at) >= ttl {
		m := b.touched.pop()
		est, ok := b.est[m.id]
		if !ok {
			continue
		}
		if now.Sub(est.lastUsed) >= ttl {
			delete(b.est, m.id)
			continue
		}
		b.touched.push(estMark{m.id, est.lastUsed})
	}
}

// Estimate returns the learned cost of (typ, key), if any.
func (e *Engine) Estimate(typ, key string) (float64, bool) {
	est, ok := e.costs.est[estID{typ, key}]
	if !ok {
		return 0, false
	}
	return est.value, true
}

// SetEstimate overrides the learned cost of (typ, key), e.g. from a
// persisted value or a simulator scenario.
func (e *Engine) SetEstimate(typ, key string, cost float64, now time.Time) {
	e.costs.set(typ, key, cost, now)
}
