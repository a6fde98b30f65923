package policy

import (
	"strings"
	"testing"
)

func TestFeasibleNamesWhatNoWorkerOffers(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.Feasible(Job{Type: "x", Resources: Resources{MilliCPU: 1000}}); !ok {
		t.Error("with no worker registered a job must be accepted: workers may come")
	}
	for _, w := range []Worker{
		{ID: "small", Slots: 1, Resources: Resources{MilliCPU: 2000, MemoryMB: 1024}},
		{ID: "gpu", Types: []string{"train"}, Labels: []string{"gpu"}, Slots: 1, Resources: Resources{MilliCPU: 8000, MemoryMB: 4096, GPU: 1}},
	} {
		if err := e.AddWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		job  Job
		ok   bool
		want string
	}{
		{Job{Type: "report", Resources: Resources{MilliCPU: 1500}}, true, ""},
		{Job{Type: "report", Resources: Resources{MilliCPU: 2500, MemoryMB: 8192}}, false,
			"asks for 2.5 cpu (the most a worker offers is 2) and 8192 MB memory (the most a worker offers is 1024 MB)"},
		{Job{Type: "train", Resources: Resources{GPU: 2}}, false, "asks for 2 gpu (the most a worker offers is 1)"},
		{Job{Type: "report", Labels: []string{"ssd"}}, false, `no registered worker that runs type "report" has the labels ssd`},
		{Job{Type: "train", Labels: []string{"gpu"}, Resources: Resources{MilliCPU: 4000, GPU: 1}}, true, ""},
	}
	for _, c := range cases {
		ok, why := e.Feasible(c.job)
		if ok != c.ok || !strings.Contains(why, c.want) {
			t.Errorf("Feasible(%+v) = %v, %q; want %v, %q", c.job, ok, why, c.ok, c.want)
		}
	}
	e2, _ := New(Config{})
	_ = e2.AddWorker(Worker{ID: "only-train", Types: []string{"train"}, Slots: 1})
	if ok, why := e2.Feasible(Job{Type: "report"}); ok || why != `no registered worker runs type "report"` {
		t.Errorf("type no worker runs: %v, %q", ok, why)
	}
}
