// Package server is fairway's job server: the HTTP API of docs/api.md in
// front of a durable store and the dispatcher (package dispatch), the one
// goroutine that owns all scheduling state.
//
// A request is authenticated (auth.go), rate-limited (ratelimit.go),
// decoded strictly (httpjson.go: one JSON object, UTF-8, no unknown fields
// or parameters) and validated into store records (validate.go). A request
// that changes state becomes one dispatcher operation (Submit, Cancel,
// Lease, Heartbeat, Complete, ...), answered once the operation's
// transaction is durable; the dispatcher's errors are mapped to the API's
// error codes in one place (classify).
//
// Reads (get, list, logs, executions, summaries) go straight to the store,
// which holds committed state; a read may see a change up to one fsync
// before the request that made it is answered.
//
// Local (local.go) is the same API for a Go program in the same process
// (package embedded): the submit and worker calls, through the same
// validation functions, dispatcher operations and error mapping
// (classify, returned as *api.Error), with no HTTP and no JSON. What it
// takes from the caller and hands back (specs, results, leases) is copied
// at the boundary, as decoding and encoding did over HTTP, so that the
// caller's buffers and the dispatcher's memory never alias.
//
// Leases, fencing and restart are the dispatcher's (package dispatch).
package server
