// Package schedule holds the math of recurring and one-time runs: when a
// schedule's slots fall, and what to do with the slots that are due at a
// given instant. It is pure like internal/policy: no I/O, no goroutines,
// no clock; every call takes now, so the rules are tested on a virtual
// clock and the server, the simulator and the tests share them.
//
// # Specs
//
// A Spec is parsed from one of three forms:
//
//   - a cron expression: five fields (minute hour day-of-month month
//     day-of-week), or six with seconds first, or a descriptor (@yearly,
//     @monthly, @weekly, @daily, @midnight, @hourly). When both
//     day-of-month and day-of-week are restricted, a day matching either
//     matches, as in Vixie/ISC cron. Parsing and the walk over wall times
//     are github.com/netresearch/go-cron's (a maintained fork of
//     robfig/cron); the walk runs on wall times without a zone, and each
//     wall time is then mapped to an instant by the rules below;
//   - an interval, "every 15m" or "every 1h offset 5m": the slots are
//     offset + k·every after the Unix epoch, so they do not depend on when
//     the schedule was created or on the zone;
//   - one time, "at 2026-12-01T09:00:00+01:00" (an offset given in the
//     text wins; without one the time is read in the schedule's zone).
//
// Cron expressions are read in the schedule's IANA zone (default UTC).
// Daylight saving: a slot whose wall time falls in a spring-forward gap
// runs once, at the first valid instant after the gap (02:30 on the night
// clocks go 02:00→03:00 runs at 03:00, and a midnight that does not exist
// runs at the first instant of that day); a wall time that happens twice
// when clocks go back runs once, at its first occurrence. A one-time spec
// without an offset follows the same rules. Optional start
// and end times bound the slots, and a jitter delays each run by a
// deterministic amount in [0, jitter) derived from the schedule id and the
// slot, so that schedules sharing a time do not start together.
//
// # Firing
//
// A slot is (schedule, nominal time). Tick takes the schedule's state (the
// next nominal time not yet handled, the slots buffered behind a running
// job, how many of its jobs are unfinished) and the instant now, and
// returns what to do: the slots to fire now (the caller creates one job
// per slot, with the slot as its identity, in the same transaction that
// stores the returned state), the slots missed because they are older
// than the catch-up window, the slots skipped by the overlap policy, and
// whether to cancel the running jobs. Missed and skipped slots are
// recorded, never dropped silently.
//
// Overlap, when a slot is due while a job of the same schedule has not
// finished:
//
//	skip          the new slot is skipped (the default)
//	buffer_one    the new slot waits for the running job; one at most, later ones are skipped
//	buffer_all    every slot waits, and they run one after another
//	cancel_other  the running job is cancelled; the new slot waits (buffered) until it has stopped, then fires
//	allow_all     the new slot fires; runs may overlap
//
// After downtime or a pause the due slots are walked in order: those older
// than the catch-up window are missed, the others go through the overlap
// policy as if they had come one by one, so a catch-up never starts more
// than the policy allows (one run under skip, a serial queue under
// buffer_all).
package schedule
