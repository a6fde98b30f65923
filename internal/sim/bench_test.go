package sim

import (
	"testing"
)

// benchVariant is bench-1m.yaml with each entry's count divided by div.
func benchVariant(t testing.TB, div int) *Scenario {
	t.Helper()
	s := loadFile(t, "bench-1m.yaml")
	for i := range s.Jobs {
		n := *s.Jobs[i].Count / div
		s.Jobs[i].Count = &n
	}
	return s
}

// The 1M-job file scaled to 10k jobs: every invariant holds, every job
// runs, and the load is what the file's comment says.
func TestBench10k(t *testing.T) {
	s := benchVariant(t, 100)
	res := run(t, s)
	sum := res.Summary
	if sum.Jobs != 10000 || sum.Done != 10000 {
		t.Fatalf("jobs %d done %d, want 10000", sum.Jobs, sum.Done)
	}
	if len(sum.Lanes) != 10 || len(sum.FairnessKeys) != 1000 {
		t.Errorf("lanes %d, fairness keys %d; want 10 and 1000", len(sum.Lanes), len(sum.FairnessKeys))
	}
	if sum.Utilisation < 0.9 || sum.Utilisation > 1 {
		t.Errorf("utilisation %.3f, want about 0.98", sum.Utilisation)
	}
	if sum.JainIndex < 0.9 {
		t.Errorf("jain index %.3f across 1000 equal keys", sum.JainIndex)
	}
}

func BenchmarkBench10k(b *testing.B) { benchRun(b, benchVariant(b, 100)) }

// benchRun runs the scenario b.N times and reports its decisions per
// second.
func benchRun(b *testing.B, s *Scenario) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := Run(s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Summary.DecisionsPerSecond, "decisions/s")
	}
}
