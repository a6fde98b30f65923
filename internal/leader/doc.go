// Package leader elects the one fairway server that dispatches among
// several on one PostgreSQL database, and fences what it writes.
//
// # The lease row
//
// Leadership is one row of the leadership table: (term, holder, address,
// expires_at). Times are the database's clock (clock_timestamp()), so the
// instances' clocks never need to agree.
//
//   - Campaign: an instance takes the row when it is free (expires_at has
//     passed) with one UPDATE that increments the term and sets itself as
//     holder: of two instances racing, the row lock lets one win.
//   - Renew: the holder pushes expires_at forward every TTL/3, guarded by
//     (holder, term). A renewal that fails, or that cannot be made before
//     the lease would run out, makes the instance step down: its leading
//     context is cancelled and the dispatcher stops.
//   - Resign: a leader that stops gracefully expires its lease at once, so
//     that a standby takes over without waiting for the TTL.
//
// # Fencing
//
// Every write transaction of the leader begins with Fence
// (fairway_fence, migration 0022): it takes a transaction-level advisory
// lock SHARED, then, in a statement of its own and so, under READ
// COMMITTED, with a snapshot taken after the lock was granted, requires
// (holder, term) to be this instance's and expires_at to lie ahead. The
// lock is held to the commit. Every UPDATE of the row that changes term
// (a campaign, of any release: a trigger, leadership_new_term, does it)
// takes the same lock EXCLUSIVELY before it commits. So:
//
//   - a transaction whose shared lock was granted before the campaign's
//     exclusive one ends before the campaign can take it, and so before
//     the new term commits;
//   - a transaction that asks after the campaign did is granted the lock
//     only once the campaign has ended (committed: its row is then
//     visible), so its check sees the new term and fails.
//
// Either way no transaction fenced under a term commits after the next
// term began. A renewal takes no advisory lock and waits for no fenced
// transaction, and fenced transactions never wait for one another (the
// store runs two at once: package postgres, "Concurrent transactions");
// each writer connection counts its commits in a leader_terms row of its
// own (its slot) for the same reason. The fence costs no tuple lock (no
// WAL record, no dirty page, no MultiXact when both connections hold it,
// as the row's FOR KEY SHARE of migration 0008 did). Advisory locks
// belong to the database, not to a schema: the key holds the leadership
// table's OID, so that schemas side by side never share it. A
// transaction that is not READ COMMITTED (its snapshot may predate the
// lock) takes the row FOR KEY SHARE instead, which the campaign's UPDATE,
// changing term, a key column, also waits for. A deposed leader, or one
// cut off from the database and back, therefore cannot commit anything
// once another instance leads:
// no two leaders ever commit in overlapping time (this is what River, Oban
// and Asynq users lost data or ran cron twice without: oban#1488,
// asynq#371).
package leader
