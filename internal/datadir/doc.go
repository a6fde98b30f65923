// Package datadir guards a server's data directory: one fairway server at a
// time.
//
// Two servers on one SQLite database would each run a dispatcher that
// believes it is the only writer of scheduling state, and lease the same
// jobs. Lock takes an exclusive flock(2) on the file fairway.lock in the
// directory and writes the holder's pid into it. The kernel drops the lock
// when the process exits, however it exits (SIGKILL included), so a stale
// lock file never blocks a restart; a second server finds the lock held
// and is refused with the holder's pid.
package datadir
