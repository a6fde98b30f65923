// Package policy is fairway's scheduling engine: the pending set, the
// admission rules and the ordering, in pure Go. It performs no I/O, starts
// no goroutine and never reads the clock; every decision takes now as an
// argument, so the same inputs always give the same decisions. The server,
// the in-process scheduler and the simulator all drive this one engine.
//
// # Structure
//
// A job lives in a lane (swimlane). Inside a lane, queued jobs are grouped
// by everything that the shared admission checks look at: type, required
// labels, resource shape, tier and whether the job is on-demand. A group is
// admissible or not as a whole (type cap, tier cap, a free worker that
// supports and fits it), which is how a blocked job is skipped without
// blocking the ones behind it.
//
// Inside a group, jobs are split into classes by (priority, fairness key,
// tenant). A class's jobs are ordered by enqueue time, and since they share
// priority and aging slope the oldest is the best; classes compete in two
// heaps (below and at the on-demand aging cap) keyed on a time-invariant
// form of the score (see slope). Fairness-key costs only grow while a key
// has queued work, so the heaps fix stale costs lazily at their top.
//
// Per-job checks park what they block: a class whose tenant is at its cap
// or its resource quota (quota.go) waits with the tenant, a job whose
// resource key is held by a conflicting job waits with that key. Both return when the blocker releases; of the
// jobs parked on a key, only the best of each class comes back (the others
// are behind it in their class and would be parked again at once), so a
// chain of a thousand jobs on one key costs nothing per decision
// (conflict.go).
//
// Rate limits on starts (ratelimit.go) are token buckets whose level is
// kept as of the last now they saw, in exact integers. An empty bucket
// blocks at the level where its jobs share it: a group-wide bucket fails
// the group's check like a type cap, a tenant's parks the class like a
// tenant cap, a key's takes the job out of its class until its token
// time. Wake-ups wait in a heap by token time; NextToken tells the owner
// when to call again.
//
// # Decision
//
// Next orders lanes by weighted dominant share (DRF), asks each lane for its
// best admissible class head by (score, fairness-key cost, enqueue time,
// submit order) and admits the first one found on the free compatible worker
// that supports the fewest types, then fits tightest. Admission charges the
// fairness key the estimated cost of (type, resource key), an exponential
// moving average of observed run time. Cancel is a tombstone, dropped when
// it reaches the head of its class; Reprioritize is a tombstone plus a new
// entry. docs/scheduling.md gives the math.
package policy
