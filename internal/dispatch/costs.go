package dispatch

import (
	"context"

	"github.com/fairwayhq/fairway/api"
)

// Costs is what fair queuing ranks by, read from the engine at the
// dispatcher's now.
func (d *Dispatcher) Costs(ctx context.Context) (api.Costs, error) {
	var out api.Costs
	err := d.submit(ctx, func(tx *txn) { out = d.costs(tx) })
	return out, err
}

func (d *Dispatcher) costs(tx *txn) api.Costs {
	cfg := d.eng.Config().Cost
	out := api.Costs{FairnessKeys: []api.FairKeyCost{}, Learned: []api.LearnedCost{}, Alpha: cfg.Alpha, DefaultCost: cfg.DefaultCost}
	for _, k := range d.eng.FairKeyCosts(tx.now) {
		c := api.FairKeyCost{Key: k.Key, Cost: k.Cost, Jobs: k.Jobs}
		if !k.IdleSince.IsZero() {
			idle := k.IdleSince.UTC()
			c.IdleSince = &idle
		}
		out.FairnessKeys = append(out.FairnessKeys, c)
	}
	for _, l := range d.eng.LearnedCosts(tx.now) {
		out.Learned = append(out.Learned, api.LearnedCost{Type: l.Type, Key: l.Key, Seconds: l.Seconds, LastUsed: l.LastUsed.UTC()})
	}
	return out
}
