package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Writer renders a run: events as they happen, then the summary.
type Writer interface {
	Event(Event) error
	Summary(Summary) error
}

// NewWriter returns the writer for format "text" or "jsonl".
func NewWriter(format string, w io.Writer) (Writer, error) {
	switch format {
	case "text":
		return textWriter{w}, nil
	case "jsonl":
		return jsonlWriter{json.NewEncoder(w)}, nil
	}
	return nil, fmt.Errorf("unknown format %q (want text or jsonl)", format)
}

type textWriter struct{ w io.Writer }

func (t textWriter) Event(e Event) error {
	_, err := fmt.Fprintf(t.w, "T=%7.3f %s %s(%s, fk=%s) lane=%s%s id=%s\n",
		e.T(), upper(e.Kind), e.Type, e.Key, orDash(e.FairnessKey), e.Lane, textDetail(e), e.ID)
	return err
}

func upper(k Kind) string {
	b := []byte(k.String())
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// textDetail is the part of a timeline line that depends on the kind.
func textDetail(e Event) string {
	switch e.Kind {
	case Arrive:
		s := fmt.Sprintf(" prio=%d", e.Priority)
		if e.OnDemand {
			s += " on_demand"
		}
		return s
	case Reprioritize:
		return fmt.Sprintf(" prio=%d", e.Priority)
	case Admit:
		return fmt.Sprintf(" worker=%s score=%d cost=%g wait=%.3f", e.Worker, e.Score, e.Cost, e.Wait.Seconds())
	case Drop:
		return " dependency=" + e.Dependency
	case Preempt:
		return fmt.Sprintf(" worker=%s ran=%.3f for=%s", e.Worker, e.Ran.Seconds(), e.For)
	}
	if e.Worker == "" {
		return ""
	}
	return fmt.Sprintf(" worker=%s ran=%.3f", e.Worker, e.Ran.Seconds())
}

func (t textWriter) Summary(s Summary) error {
	_, err := fmt.Fprintf(t.w, "\nsummary\n"+
		"  jobs %d  admitted %d  done %d  cancelled %d  dropped %d  pending %d  running %d\n"+
		"  makespan %.3f s  capacity %d slots  busy %.3f slot-s  utilisation %.4f  jain_index %.4f\n"+
		"  decisions %d  wall %.3f s  decisions/s %.0f\n"+
		"  reservations %d  held_idle %.3f slot-s  backfilled %d  preemptions %d\n",
		s.Jobs, s.Admitted, s.Done, s.Cancelled, s.Dropped, s.Pending, s.Running,
		s.Makespan, s.CapacitySlots, s.BusySlotSeconds, s.Utilisation, s.JainIndex,
		s.Decisions, s.WallSeconds, s.DecisionsPerSecond,
		s.Reservations, s.HeldIdleSlotSeconds, s.Backfilled, s.Preemptions)
	if err != nil {
		return err
	}
	if s.Snoozes > 0 {
		if _, err := fmt.Fprintf(t.w, "  snoozes %d\n", s.Snoozes); err != nil {
			return err
		}
	}
	if err := groupTable(t.w, "fairness_key", s.FairnessKeys); err != nil {
		return err
	}
	if err := groupTable(t.w, "lane", s.Lanes); err != nil {
		return err
	}
	if err := scheduleTable(t.w, s.Schedules); err != nil {
		return err
	}
	lag := ""
	if len(s.Schedules) > 0 {
		lag = lagLegend
	}
	_, err = fmt.Fprintf(t.w, summaryLegend, lag)
	return err
}

// summaryLegend says what the less obvious figures of the summary mean
// (docs/simulator.md defines them all).
const summaryLegend = "\n  legend: waits in s, ready to admitted; share: part of all busy slot-s; service_rate: slot-s held per s" +
	" of waiting; jain_index: 1 = waiting keys served equally, 1/n = one got all; reservations: jobs that reserved" +
	" a worker; held_idle: slot-s left idle draining for them; backfilled: admissions into reserved gaps; preemptions: runs stopped and queued again%s (docs/simulator.md)\n"

// lagLegend joins the legend when the scenario has schedules.
const lagLegend = "; lag: s from a slot's nominal time to its job's admission"

func groupTable(w io.Writer, title string, m map[string]GroupStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\n%s\tjobs\tadmitted\tmean_wait\tp50_wait\tp99_wait\tmax_wait\tshare\tservice_rate\t\n", title)
	for _, name := range sortedKeys(m) {
		g := m[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%.3f\t\n", orDash(name), g.Jobs, g.Admitted,
			g.MeanWait, g.P50Wait, g.P99Wait, g.MaxWait, g.CapacityShare, g.ServiceRate)
	}
	return tw.Flush()
}

// scheduleTable shows what became of each schedule's slots, if any.
func scheduleTable(w io.Writer, m map[string]ScheduleStats) error {
	if len(m) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\nschedule\tslots\tfired\tskipped\tmissed\tmean_lag\tp50_lag\tp99_lag\tmax_lag\t\n")
	for _, name := range sortedKeys(m) {
		g := m[name]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, g.Slots, g.Fired, g.Skipped, g.Missed,
			g.MeanLag, g.P50Lag, g.P99Lag, g.MaxLag)
	}
	return tw.Flush()
}

type jsonlWriter struct{ enc *json.Encoder }

// jsonEvent is an event's JSON form; fields that do not apply to its kind
// are left out.
type jsonEvent struct {
	T           float64  `json:"t"`
	Event       string   `json:"event"`
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Key         string   `json:"key"`
	FairnessKey string   `json:"fairness_key"`
	Tenant      string   `json:"tenant,omitempty"`
	Lane        string   `json:"lane"`
	Priority    int      `json:"priority"`
	OnDemand    bool     `json:"on_demand,omitempty"`
	Worker      string   `json:"worker,omitempty"`
	Score       *int64   `json:"score,omitempty"`
	Cost        *float64 `json:"cost,omitempty"`
	Wait        *float64 `json:"wait,omitempty"`
	Ran         *float64 `json:"ran,omitempty"`
	Dependency  string   `json:"dependency,omitempty"`
	For         string   `json:"for,omitempty"` // preempt: the waiting job
}

func (j jsonlWriter) Event(e Event) error {
	out := jsonEvent{
		T: e.T(), Event: e.Kind.String(), ID: e.ID, Type: e.Type, Key: e.Key, FairnessKey: e.FairnessKey,
		Tenant: e.Tenant, Lane: e.Lane, Priority: e.Priority, OnDemand: e.OnDemand, Worker: e.Worker,
		Dependency: e.Dependency, For: e.For,
	}
	switch e.Kind {
	case Admit:
		wait := e.Wait.Seconds()
		out.Score, out.Cost, out.Wait = &e.Score, &e.Cost, &wait
	case Done, Cancel, Preempt:
		if e.Worker != "" {
			ran := e.Ran.Seconds()
			out.Ran = &ran
		}
	}
	return j.enc.Encode(out)
}

func (j jsonlWriter) Summary(s Summary) error {
	return j.enc.Encode(struct {
		Event string `json:"event"`
		Summary
	}{"summary", s})
}
