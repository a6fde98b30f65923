// Package instance assembles one fairway instance from the server's
// parts: the store, the dispatcher (package server) and, on PostgreSQL,
// the leadership (package ha). `fairway server` and a Go program that
// embeds fairway (package embedded) build it the same way, so that they
// keep the same guarantees: on SQLite one process owns the data directory
// (its lock) and runs the dispatcher; on PostgreSQL every instance is an
// ha.Node, a standby until it wins a term, and the leader's writes are
// fenced by that term.
//
// An Instance offers two ways in. Handler is the HTTP API and UI, served
// by the caller on a listener of its own (http.go builds the server with
// the limits of `fairway server`). Leading is the in-process way: the
// running server's Local API and the context a call must run under (the
// term's, on PostgreSQL), or nothing while this instance does not lead;
// a caller then goes through Handler, which forwards to the leader as for
// any HTTP client.
package instance
