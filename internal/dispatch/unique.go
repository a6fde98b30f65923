package dispatch

import (
	"fmt"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/wire"
)

// uniqueDuplicate answers a submit whose unique rule matched a job that
// holds its claim (store doc, "Unique jobs"): that job, deduplicated,
// with the rule that matched. Nothing of the new job was stored.
func (d *Dispatcher) uniqueDuplicate(tx *txn, j store.Job, uniq *store.UniqueError, actor string) submitted {
	orig, err := d.currentJob(tx, uniq.JobID)
	if err != nil {
		tx.fatal(fmt.Errorf("read the job a unique rule matched: %w", err))
		return submitted{}
	}
	rule := wire.UniqueRule(j.Unique)
	match := &api.UniqueMatch{By: rule.By, States: rule.States, JobID: orig.ID}
	if rule.PeriodMS != nil {
		match.PeriodMS = *rule.PeriodMS
	}
	tx.event(orig.ID, orig.Attempt, orig.Tenant, store.EventDeduplicated, actor,
		map[string]any{"unique_by": match.By, "unique_states": match.States, "unique_period_ms": match.PeriodMS})
	return submitted{job: &orig, deduplicated: true, uniqueMatch: match}
}
