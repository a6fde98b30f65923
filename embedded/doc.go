// Package embedded runs fairway inside a Go program: the durable store
// (a SQLite data directory, or PostgreSQL), the dispatcher and the
// program's own handlers, with no HTTP between them. It is the server's
// own parts (package instance assembles them as `fairway server` does),
// so the guarantees are the server's:
//
//   - acknowledged = durable: Submit returns, and a completion is
//     acknowledged, once its transaction is committed (SQLite: fsync'd;
//     PostgreSQL: committed);
//   - fenced by attempt and term: every worker call names the job's
//     attempt, and a stale one is refused (stale_attempt), as over HTTP;
//     on PostgreSQL the leader's writes are also fenced by its term;
//   - restart and failover rebuild the same state.
//
// A program opens it, makes workers with worker.Options as for a remote
// server (without Client: NewWorker sets the in-process Transport),
// submits jobs and closes it:
//
//	fw, err := embedded.Open(ctx, embedded.Options{Store: "./fairway-data"})
//	w, err := fw.NewWorker(worker.Options{Handlers: map[string]worker.Handler{"resize": worker.Typed(resize)}})
//	go w.Run(ctx)
//	_, err = fw.Submit(ctx, api.JobSpec{Type: "resize", Payload: ...})
//	...
//	err = fw.Close(ctx)
//
// With Options.HTTPAddr it also serves the HTTP API and the web UI, so
// that the CLI, other programs and `fairway worker` processes can join.
//
// # Several processes on PostgreSQL
//
// Every process that opens the same PostgreSQL database is an instance
// of package ha: they elect one leader, which runs the dispatcher; the
// others stand by. The in-process transport calls the dispatcher directly
// only while its process leads, under the term's context (a call does
// not outlive the term). In a process that does not lead, each call goes
// through the process's own HTTP handler, which forwards it to the
// leader's HTTPAddr over HTTP, as a standby forwards any client's
// request; with no leader known it is refused with 503 not_leader and
// the worker retries with back-off, so its jobs wait for a new leader
// rather than fail. When the leader dies, another process wins the next
// term and rebuilds the state from the database; workers in the dead
// process are declared lost after lease_ttl and their jobs run again.
// Give every process an HTTPAddr the others can reach: without it, a
// process that does not lead cannot reach the leader, and its workers
// and Submits wait until it leads itself.
package embedded
