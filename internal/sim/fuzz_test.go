package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary documents to the parser: it must never panic,
// and every error must wrap ErrScenario. Small valid scenarios are also run
// for a bounded virtual time.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(scenarioDir, "seed*.yaml"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	for _, doc := range []string{
		"",
		"pool: {slots: 1}\ntypes: {t: {}}\njobs: [{type: t, key: \"{i%3}\", count: 4, every: 0.5, duration: 1}]\n",
		"workers: [{name: w, count: 2, types: [t]}]\ntypes: {t: {}}\ntiers: {\"1-5\": {max_running: 1}}\n",
		"pool: {slots: 2}\ntypes: {t: {}}\njobs: [{id: a, type: t}, {type: t, depends_on: [a], cancel_at: 1}]\n",
		"lanes: {a: {aging: {step: 1, interval: 0.001}, on_demand: {max_aging: 0}}}\n",
		"jobs: [{type: t, key: \"{i%\"}]\n",
		"- [1, 2]\n",
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrScenario) {
				t.Fatalf("error does not wrap ErrScenario: %v", err)
			}
			return
		}
		if copies(s) > 200 {
			return
		}
		if _, err := Run(s, Options{Stop: sec(3600)}); err != nil && !errors.Is(err, ErrScenario) {
			t.Fatalf("run: %v", err)
		}
	})
}

func copies(s *Scenario) int {
	n := 0
	for _, j := range s.Jobs {
		if j.Count != nil {
			n += *j.Count
		} else {
			n++
		}
	}
	return n
}
