package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
	"github.com/fairwayhq/fairway/internal/store"
)

// resolveUnique checks a spec's unique rule and fills in its default
// states. Every mistake names the field and what to write instead.
func resolveUnique(j *store.Job, spec api.JobSpec, _ config.Type) *fieldError {
	u := spec.Unique
	if u == nil {
		return nil
	}
	if len(u.By) == 0 {
		return badField("unique.by", "is required: list the fields that make two jobs the same (%s)", uniqueFieldNames())
	}
	rule := store.UniqueRule{}
	for i, f := range u.By {
		if !store.UniqueField(f).Valid() {
			return badField(fmt.Sprintf("unique.by[%d]", i), "unknown field %q: use %s", f, uniqueFieldNames())
		}
		rule.By = append(rule.By, store.UniqueField(f))
	}
	for i, st := range u.States {
		if !store.State(st).Valid() {
			return badField(fmt.Sprintf("unique.states[%d]", i), "unknown state %q: use %s", st, stateNames(store.AllStates()))
		}
		rule.States = append(rule.States, store.State(st))
	}
	if len(rule.States) == 0 {
		rule.States = store.DefaultUniqueStates()
	}
	if p := u.PeriodMS; p != nil {
		switch {
		case *p <= 0:
			return badField("unique.period_ms", "must be > 0, got %d (leave it out for a rule without a time bound)", *p)
		case time.Duration(*p) > store.MaxUniquePeriod/time.Millisecond:
			return badField("unique.period_ms", "must be at most %d (%d days), got %d",
				store.MaxUniquePeriod.Milliseconds(), store.MaxUniquePeriod/(24*time.Hour), *p)
		}
		rule.Period = time.Duration(*p) * time.Millisecond
	}
	rule.Normalize()
	j.Unique = &rule
	return nil
}

func uniqueFieldNames() string {
	var names []string
	for _, f := range store.UniqueFields() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

func stateNames(states []store.State) string {
	var names []string
	for _, s := range states {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
