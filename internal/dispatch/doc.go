// Package dispatch is fairway's dispatcher: the one goroutine that owns the
// scheduling state of the job server (the policy engine, the in-memory index
// of unfinished jobs and workers, the workers' mailboxes and polls) and the
// one writer of the store's job state. The HTTP API (package server) calls
// its operations (dispatch_api.go); nothing else touches its state.
//
// Every request that changes state becomes a command sent to the
// dispatcher. The dispatcher takes every command waiting (up to a batch
// limit) and applies them inside ONE store transaction: it checks each
// against its in-memory index of unfinished jobs and workers, mutates the
// policy engine, and writes the fenced transitions and audit events. Then it
// asks the engine for admissions (Dispatch) and writes those leases in the
// same transaction; jobs that arrived in the batch and wait only for a slot
// may take the slot of a lease that has not left the server yet
// (preempt.go). The store reports the commit at once and its durability
// later (Store.WriteDeferred): only once the commit is durable does the
// dispatcher answer the requests, hand the batch's leases to workers (from
// their mailboxes, highest priority first) and wake waiters, so
// acknowledged means durable. While a commit waits for the disk the
// dispatcher gathers the commands that arrive and applies them together
// once it is durable (group commit). With a store that queues its
// transactions (store.Queueing: both drivers; a wrapper such as
// instance.OpenedStore must keep it) the gathering ends as soon as the
// store can take the next transaction (Ready): the dispatcher forms batch
// n+1 while the store runs batch n (SQLite's Ready also waits out a
// running fsync, whose batch would wait for the next one anyway, unless
// recent waits for the fsync gathered almost nothing: gather.go). Every
// gathering ends early for a submit bringing a job that
// outranks a lease still in a mailbox: it is applied at once, so that the
// job can take that lease's slot before it leaves. An answer that would
// carry only leases of lower priority than one of the same worker still
// waiting for the disk waits for it once (lease.go). If a commit fails, every request of
// the batch gets an error and the dispatcher rebuilds its state from the
// store, as at start.
//
// # Leases and fencing
//
// A lease carries the job's attempt number, incremented at every lease. A
// worker presents it on heartbeat and complete (and on start, for older
// workers); a stale attempt is refused (stale_attempt), so a worker that
// lost its lease cannot overwrite the outcome of a newer attempt.
//
// The start is folded into the lease: the lease's write makes the job
// running, with started_at the lease time. The worker reports the real
// start with its heartbeats and its completion; the first report is
// stored, clamped to [lease, now] (recordStart). What the state leased
// used to tell apart is kept in memory: a lease still in its worker's
// mailbox has not left the server (undelivered: it may be cancelled,
// withdrawn or handed back at no cost), and an attempt its worker has
// listed in a heartbeat or reported on is held.
//
// Worker liveness is tracked per worker: every worker call counts as a
// heartbeat, and a worker silent for the lease TTL is lost — its jobs are
// re-queued for a new attempt (failure class lost_worker) if their retry
// policy allows, else they fail.
//
// # Restart
//
// At start the dispatcher loads every unfinished job and every active worker
// from the store and rebuilds the engine: pending work is queued again,
// leased and running jobs are restored on their workers, which get one lease
// TTL to call in before they are declared lost. A lease committed just
// before a crash may never have reached its worker: a worker's heartbeat
// lists every attempt it holds from the moment it receives the lease, so an
// attempt the worker has not shown it holds since the restart (in a
// heartbeat or a report) and missing from a heartbeat sent a
// heartbeat interval after the restart goes back to the queue uncharged
// (handBack: returned_leases + 1, a lease_returned event; the attempt
// number still grows at the next lease, which keeps the lost lease fenced).
//
// A snoozed attempt (snooze.go) is uncharged the same way, counted in the
// job's snoozes too, and sends the job to blocked until its delay has
// passed. A unique rule's duplicate (unique.go) is found by the store,
// which claims the rule's hash in the insert's own operation: the
// dispatcher answers the job the store names.
//
// # Listings of unfinished jobs
//
// The store keeps no index on an unfinished job's state (store doc.go, "The
// hot row and its indexes"), so the dispatcher answers listings of
// unfinished states (ListUnfinished, CountUnfinished; listing.go): it keeps
// its jobs by state as well as by id (every state change goes through
// transition), and a listing walks the sets of the states asked for,
// keeping the page's newest jobs in a bounded heap, with JobList's filters,
// order and cursor. Like explain, it runs as a command between two others
// and is answered once its batch is durable, so it lists a committed state.
// The cost is one pass over the listed states' jobs: a page of the 100
// running jobs among 1,000,000 pending reads 100 records; a page of the
// pending ones reads them all.
package dispatch
