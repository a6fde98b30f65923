// Package connlimit bounds the connections an HTTP server holds, so that
// idle or slow clients cannot use up its file descriptors and lock everyone
// out (accept: too many open files).
//
// Listener wraps a net.Listener. It counts the open connections and learns
// from the http.Server's ConnState hook which of them are idle (keep-alive
// between requests). When a new connection arrives with Max connections
// open:
//
//  1. the connection idle the longest is closed to make room (a client
//     reopens an idle keep-alive connection transparently);
//  2. if none is idle, the new connection is admitted as a reserve
//     connection while fewer than Max+Reserve are open: Guard lets it reach
//     only the health routes (/healthz, /readyz), so an operator and the
//     orchestrator's probes still get in, and answers anything else 503
//     with Connection: close;
//  3. past Max+Reserve it is closed at once.
//
// Max stays below the process's RLIMIT_NOFILE (DefaultMax), leaving room for
// the store's files and the reserve, so accept never fails for want of a
// descriptor.
package connlimit
