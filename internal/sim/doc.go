// Package sim runs scenario files through the scheduling engine
// (internal/policy) in virtual time: the `fairway sim` subcommand and the
// scenario tests are built on it.
//
// # Scenario
//
// Load parses a YAML scenario (docs/simulator.md is the reference): the
// pool or workers, lanes, tiers, job types, tenants (with their quotas),
// rate limits on starts, cost learning and a list of jobs. Unknown fields are errors, and every error wraps
// ErrScenario and names the field, e.g. "jobs[3].duration: must be >= 0".
// A jobs entry with count N stands for N copies arriving every S seconds;
// {i} and {i%M} in its id, key, fairness_key, tenant and depends_on are
// replaced by the copy's index. Entries are expanded lazily: only one cursor
// per entry exists until a copy arrives, so a few lines describe a million
// jobs.
//
// # Virtual time
//
// The clock starts at Epoch (2026-01-01T00:00:00Z, never the wall clock)
// and jumps from instant to instant: the next arrival (a heap of cursors,
// ordered by time then file order), the next completion (a heap of running
// jobs), the next per-job timer (run_at, cancel_at, reprioritize.at) and the
// engine's NextDue and NextToken (a rate-limited job's token). At one
// instant the loop
//
//  1. finishes the jobs whose run ends now (Finish, outcome Succeeded: the
//     engine learns the run time as the cost of (type, key));
//  2. submits the arrivals, after SetEstimate when the job gives a cost;
//  3. fires timers: readiness after run_at, cancels (Cancel, or Finish with
//     Cancelled when running), reprioritizations;
//  4. calls Next until it admits nothing more; each admitted job will
//     complete at now + duration.
//
// Nothing can be admitted between instants: capacity, the pending set and
// due times only change at them, so no decision is missed. Memory is the
// engine's pending set plus one record per job in the system; a job's record
// is dropped when it ends.
//
// # Results
//
// Events (arrive, reprioritize, admit, done, cancel, drop) go to a sink as
// they happen, or are kept in Result.Events for tests. The Summary has, per
// fairness key and per lane, the number of jobs, waits (admission minus
// ready time, ready = max(arrival, run_at)), busy slot-seconds and capacity
// share, and over the run the utilisation, Jain's fairness index, the
// decisions and the engine loop's decisions per second of wall time.
//
// Jain's index is J = (Σx)² / (n·Σx²) over the fairness keys that were ever
// backlogged, where x_i is key i's service rate while backlogged: the
// slot-seconds its jobs held during the time it had at least one ready job
// not yet admitted, divided by that time. A key whose jobs never waited is
// not counted; J is 1 when no key was backlogged. J = 1 when every
// backlogged key was served at the same rate, 1/n when one key got it all.
package sim
