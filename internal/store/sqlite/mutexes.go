package sqlite

// SQLite's own mutexes, and why this driver needs almost none of them.
//
// go-sqlite3 builds SQLite serialized (SQLITE_THREADSAFE=1) and opens each
// connection with SQLITE_OPEN_FULLMUTEX, and SQLite keeps memory
// statistics by default (SQLITE_CONFIG_MEMSTATUS), which takes a global
// mutex around every sqlite3_malloc and sqlite3_free. A drained job's
// statements lock and unlock a pthread mutex a few hundred times: about 5%
// of the process's CPU in a profile of fairway bench drain --embedded,
// nearly all of it uncontended. This driver needs neither:
//
//   - database/sql holds a connection's lock around every call into the
//     driver on it, so no connection (nor its statements) is used from two
//     goroutines at once, which is all SQLite's multi-thread mode asks:
//     dsn opens every connection with _mutex=no (SQLITE_OPEN_NOMUTEX).
//     What the driver calls from elsewhere, sqlite3_interrupt on a
//     cancelled context, SQLite documents as safe from any thread.
//   - nothing reads SQLite's memory statistics (sqlite3_memory_used, a
//     soft heap limit), so they are switched off before SQLite
//     initialises, at package init: before any connection opens. If
//     SQLite is already initialised (a program that opened a database in
//     an earlier init), sqlite3_config refuses and the statistics stay on:
//     slower, nothing else.

/*
int sqlite3_config(int, ...);
long long sqlite3_memory_used(void);

// SQLITE_CONFIG_MEMSTATUS is 9 in sqlite3.h; this preamble declares the two
// functions it calls rather than including the header, which go-sqlite3
// keeps in its own package.
static int fairway_memstatus_off(void) { return sqlite3_config(9, 0); }
*/
import "C"

func init() {
	C.fairway_memstatus_off()
	walbufErr = registerWalbuf() // initialises SQLite: after the line above
}

// memoryUsed is sqlite3_memory_used(): 0 while the statistics are off.
func memoryUsed() int64 { return int64(C.sqlite3_memory_used()) }
