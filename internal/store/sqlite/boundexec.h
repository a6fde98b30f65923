/*
** boundexec.h: the declarations of sqlite3.h that boundexec.c uses,
** copied (with the comments trimmed) from the header of the SQLite that
** github.com/mattn/go-sqlite3 v1.14.52 compiles in (sqlite3-binding.h,
** SQLITE_VERSION "3.53.4"); see walbuf.h for the original's notice. The
** functions resolve at link time to go-sqlite3's compiled amalgamation.
*/
#ifndef FAIRWAY_BOUNDEXEC_H
#define FAIRWAY_BOUNDEXEC_H

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long int sqlite_int64;
typedef unsigned long long int sqlite_uint64;
typedef sqlite_int64 sqlite3_int64;
typedef sqlite_uint64 sqlite3_uint64;
typedef void (*sqlite3_destructor_type)(void*);

#define SQLITE_OK      0
#define SQLITE_MISUSE 21
#define SQLITE_ROW   100
#define SQLITE_DONE  101
#define SQLITE_UTF8    1
#define SQLITE_STATIC ((sqlite3_destructor_type)0)

int sqlite3_bind_null(sqlite3_stmt*, int);
int sqlite3_bind_int64(sqlite3_stmt*, int, sqlite3_int64);
int sqlite3_bind_double(sqlite3_stmt*, int, double);
int sqlite3_bind_text64(sqlite3_stmt*, int, const char*, sqlite3_uint64,
                        void(*)(void*), unsigned char encoding);
int sqlite3_bind_blob64(sqlite3_stmt*, int, const void*, sqlite3_uint64,
                        void(*)(void*));
int sqlite3_bind_zeroblob(sqlite3_stmt*, int, int n);
int sqlite3_bind_parameter_count(sqlite3_stmt*);
int sqlite3_step(sqlite3_stmt*);
int sqlite3_reset(sqlite3_stmt *pStmt);
int sqlite3_clear_bindings(sqlite3_stmt*);
sqlite3 *sqlite3_db_handle(sqlite3_stmt*);
int sqlite3_changes(sqlite3*);
int sqlite3_extended_errcode(sqlite3 *db);
const char *sqlite3_errmsg(sqlite3*);
int sqlite3_system_errno(sqlite3*);
const char *sqlite3_sql(sqlite3_stmt *pStmt);

/* boundexec.c */
int fairway_bound_exec(sqlite3_stmt *st, int n, const unsigned char *kinds,
                       const sqlite3_int64 *vals, const int *lens,
                       const char *buf, long long *changes,
                       char *errmsg, int errcap, int *sys_errno);

#endif
