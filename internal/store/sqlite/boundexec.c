/*
** boundexec.c: one call from Go runs a prepared statement with its
** arguments (boundexec.go). go-sqlite3 crosses from Go to C once per
** argument, and once each for the reset and the step; this binds every
** argument, steps and resets in one crossing.
*/
#include <string.h>
#include "boundexec.h"

/* The kinds of boundexec.go's boundKind. */
enum { K_NULL = 0, K_INT = 1, K_FLOAT = 2, K_TEXT = 3, K_BLOB = 4 };

static const char empty[1] = "";

/*
** fairway_bound_exec binds argument i (1-based i+1) of st as kinds[i]
** says: vals[i] is the integer, the double's bits, or the offset in buf of
** the text or blob of lens[i] bytes. It steps st once (an UPDATE, INSERT
** or DELETE runs to its end; a statement returning rows stops at its
** first, as go-sqlite3's Exec does), stores the rows changed, and leaves
** st reset with no bindings, so that nothing refers to buf after it
** returns (the bindings are SQLITE_STATIC: not copied). It returns
** SQLITE_OK or the extended result code of the failure, whose message it
** copies into errmsg (at most errcap bytes, NUL-terminated) with the
** system errno, before the reset.
*/
int fairway_bound_exec(sqlite3_stmt *st, int n, const unsigned char *kinds,
                       const sqlite3_int64 *vals, const int *lens,
                       const char *buf, long long *changes,
                       char *errmsg, int errcap, int *sys_errno) {
  sqlite3 *db = sqlite3_db_handle(st);
  int rc = SQLITE_OK;
  int i;
  /* st is reset with no bindings: fresh from prepare, or as the last call
     left it (below); nothing else runs it. */
  for (i = 0; i < n && rc == SQLITE_OK; i++) {
    switch (kinds[i]) {
    case K_NULL:
      rc = sqlite3_bind_null(st, i + 1);
      break;
    case K_INT:
      rc = sqlite3_bind_int64(st, i + 1, vals[i]);
      break;
    case K_FLOAT: {
      double d;
      memcpy(&d, &vals[i], sizeof d);
      rc = sqlite3_bind_double(st, i + 1, d);
      break;
    }
    case K_TEXT:
      rc = sqlite3_bind_text64(st, i + 1, lens[i] ? buf + vals[i] : empty,
                               (sqlite3_uint64)lens[i], SQLITE_STATIC, SQLITE_UTF8);
      break;
    case K_BLOB:
      if (lens[i] == 0) {
        rc = sqlite3_bind_zeroblob(st, i + 1, 0);
      } else {
        rc = sqlite3_bind_blob64(st, i + 1, buf + vals[i], (sqlite3_uint64)lens[i], SQLITE_STATIC);
      }
      break;
    default:
      rc = SQLITE_MISUSE;
    }
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
      rc = SQLITE_OK;
      *changes = sqlite3_changes(db);
    }
  }
  if (rc != SQLITE_OK) {
    const char *msg = sqlite3_errmsg(db);
    int code = sqlite3_extended_errcode(db);
    size_t len = strlen(msg);
    if (code != SQLITE_OK) {
      rc = code;
    }
    if (len >= (size_t)errcap) {
      len = (size_t)errcap - 1;
    }
    memcpy(errmsg, msg, len);
    errmsg[len] = 0;
    *sys_errno = sqlite3_system_errno(db);
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}
