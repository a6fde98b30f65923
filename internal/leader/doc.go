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
// Every write transaction of the leader begins with Fence: a SELECT ... FOR
// KEY SHARE of the row that requires (holder, term) to be this instance's
// and expires_at to lie ahead. The row lock is held to the commit. A
// campaign's UPDATE changes term, a key column (the row has a unique index
// on it), so it takes the row FOR UPDATE, which conflicts with every key
// share: a new term can begin only after every transaction fenced under
// the old one has committed or rolled back. A renewal changes only
// expires_at, takes FOR NO KEY UPDATE, and so waits for no fenced
// transaction, and fenced transactions never wait for one another (the
// store runs two at once: package postgres, "Overlapped commits"); each
// writer connection counts its commits in a leader_terms row of its own
// (its slot) for the same reason. A transaction that starts after the new
// term began fails its fence and commits nothing. A deposed leader, or one
// cut off from the database and back, therefore cannot commit anything
// once another instance leads:
// no two leaders ever commit in overlapping time (this is what River, Oban
// and Asynq users lost data or ran cron twice without: oban#1488,
// asynq#371).
package leader
