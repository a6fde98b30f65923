package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"pgregory.net/rapid"
)

// seedModel is seed 001's dispatch algorithm written as plainly as in its
// appendix: sort the pending jobs by (-priority, accumulated cost of the
// fairness key, arrival), admit the first admissible one, repeat.
type seedModel struct {
	slots   int
	alpha   float64
	types   map[JobType]JobTypeConfig
	pending []*modelJob
	running []*modelJob
	vt      map[string]float64
	est     map[[2]string]float64
}

type modelJob struct {
	id      string
	typ     JobType
	key, fk string
	arrival time.Time
	seq     int
	cost    float64 // charged at admission
	started time.Time
}

func (m *seedModel) prio(j *modelJob) int { return int(m.types[j.typ].Priority) }

func (m *seedModel) admissible(j *modelJob) bool {
	cfg := m.types[j.typ]
	tier, typ := 0, 0
	for _, r := range m.running {
		rc := m.types[r.typ]
		if rc.Priority == cfg.Priority {
			tier++
		}
		if r.typ == j.typ {
			typ++
		}
		if cfg.ConflictGroup != "" && rc.ConflictGroup == cfg.ConflictGroup && r.key == j.key {
			return false
		}
	}
	return tier < int(cfg.Priority) && (cfg.MaxConcurrency == 0 || typ < cfg.MaxConcurrency)
}

func (m *seedModel) dispatch(now time.Time) []string {
	var out []string
	for len(m.running) < m.slots {
		sort.SliceStable(m.pending, func(a, b int) bool {
			x, y := m.pending[a], m.pending[b]
			if m.prio(x) != m.prio(y) {
				return m.prio(x) > m.prio(y)
			}
			if m.vt[x.fk] != m.vt[y.fk] {
				return m.vt[x.fk] < m.vt[y.fk]
			}
			if !x.arrival.Equal(y.arrival) {
				return x.arrival.Before(y.arrival)
			}
			return x.seq < y.seq
		})
		i := slices.IndexFunc(m.pending, m.admissible)
		if i < 0 {
			break
		}
		j := m.pending[i]
		m.pending = slices.Delete(m.pending, i, i+1)
		j.cost, j.started = m.costOf(j), now
		m.vt[j.fk] += j.cost
		m.running = append(m.running, j)
		out = append(out, j.id)
	}
	return out
}

func (m *seedModel) costOf(j *modelJob) float64 {
	if c, ok := m.est[[2]string{string(j.typ), j.key}]; ok {
		return c
	}
	if c := m.types[j.typ].DefaultCost; c > 0 {
		return float64(c)
	}
	return 1
}

func (m *seedModel) finish(i int, now time.Time) *modelJob {
	j := m.running[i]
	m.running = slices.Delete(m.running, i, i+1)
	id := [2]string{string(j.typ), j.key}
	prev, ok := m.est[id]
	if !ok {
		prev = j.cost
	}
	m.est[id] = m.alpha*now.Sub(j.started).Seconds() + (1-m.alpha)*prev
	return j
}

// The engine as the scheduler configures it (buildEngine, then
// addToEngine per type) makes exactly
// the decisions of seed 001's reference algorithm, cost learning included.
func TestEngineMatchesSeedAlgorithm(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &seedModel{
			slots: rapid.IntRange(1, 6).Draw(rt, "slots"),
			alpha: rapid.SampledFrom([]float64{0.3, 0.5, 1}).Draw(rt, "alpha"),
			types: map[JobType]JobTypeConfig{},
			vt:    map[string]float64{},
			est:   map[[2]string]float64{},
		}
		nTypes := rapid.IntRange(1, 4).Draw(rt, "types")
		var names []JobType
		for i := range nTypes {
			name := JobType(fmt.Sprintf("t%d", i))
			names = append(names, name)
			m.types[name] = JobTypeConfig{
				DefaultCost:    rapid.IntRange(0, 20).Draw(rt, "cost"),
				MaxConcurrency: rapid.IntRange(0, 3).Draw(rt, "maxConc"),
				ConflictGroup:  ConflictGroup(rapid.SampledFrom([]string{"", "git"}).Draw(rt, "group")),
				Priority:       Priority(rapid.IntRange(1, 4).Draw(rt, "prio")),
			}
		}
		s := &Scheduler{opts: Options{MaxConcurrency: m.slots, Alpha: m.alpha, KeyTTL: 1000 * time.Hour}, types: map[JobType]JobTypeConfig{}}
		eng, err := s.buildEngine()
		if err != nil {
			rt.Fatal(err)
		}
		s.eng = eng
		for _, name := range names {
			if err := s.addToEngine(name, m.types[name]); err != nil {
				rt.Fatal(err)
			}
			s.types[name] = m.types[name]
		}
		now := time.Unix(1_700_000_000, 0)
		seq := 0
		steps := rapid.IntRange(1, 120).Draw(rt, "steps")
		for step := range steps {
			now = now.Add(time.Duration(rapid.IntRange(0, 5).Draw(rt, "dt")) * time.Second)
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op < 4 && len(m.running) > 0:
				j := m.finish(rapid.IntRange(0, len(m.running)-1).Draw(rt, "which"), now)
				if _, err := eng.Finish(j.id, now, policy.Succeeded); err != nil {
					rt.Fatal(err)
				}
			case op == 4 && len(m.pending) > 0: // a RunSync caller gave up
				i := rapid.IntRange(0, len(m.pending)-1).Draw(rt, "withdraw")
				if _, err := eng.Cancel(m.pending[i].id, now); err != nil {
					rt.Fatal(err)
				}
				m.pending = slices.Delete(m.pending, i, i+1)
			default:
				seq++
				j := &modelJob{
					id:      fmt.Sprintf("j%d", seq),
					typ:     rapid.SampledFrom(names).Draw(rt, "type"),
					key:     rapid.SampledFrom([]string{"r1", "r2", "r3"}).Draw(rt, "key"),
					fk:      rapid.SampledFrom([]string{"", "A", "B", "C"}).Draw(rt, "fk"),
					arrival: now, seq: seq,
				}
				m.pending = append(m.pending, j)
				pj := policy.Job{ID: j.id, Type: string(j.typ), Key: j.key, FairnessKey: j.fk, Priority: m.prio(j), Lane: laneName}
				if err := eng.Submit(pj, now); err != nil {
					rt.Fatal(err)
				}
			}
			var got []string
			for _, a := range eng.Dispatch(now, 0) {
				got = append(got, a.JobID)
			}
			if want := m.dispatch(now); !slices.Equal(got, want) {
				rt.Fatalf("step %d: engine admitted %v, seed algorithm %v", step, got, want)
			}
		}
	})
}
