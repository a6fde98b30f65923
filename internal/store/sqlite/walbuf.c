/*
** walbuf.c: the "fairway-walbuf" VFS, a shim over SQLite's "unix" VFS that
** turns the writes of a WAL commit into one pwrite (walbuf.go has the
** argument; this file has the mechanism).
**
** SQLite writes each WAL frame as two writes, its 24-byte header and its
** page, every one a system call. This shim keeps the writes to a WAL file
** that continue the previous write (offset == end of the last write) in a
** buffer, and writes the buffer out (flushes it) before anything could
** look at the file or at what SQLite publishes about it:
**
**   - on the WAL file: before xRead, xSync, xTruncate, xFileSize, xLock,
**     xUnlock, xCheckReservedLock, xFileControl, xClose, and before any
**     write that does not continue the last one (it then goes straight to
**     the file, so writes reach the file in the order SQLite made them);
**   - right after the write that follows a commit frame's header (a 24-byte
**     write whose bytes 4..7, the database size, are not zero): the page of
**     the commit frame. From a commit header until the connection next
**     calls a shm method, no write stays in the buffer;
**   - on the database file of the same connection: before xShmMap,
**     xShmLock, xShmBarrier, xShmUnmap. SQLite publishes a commit through
**     the wal-index (shm) after writing its frames, and takes and releases
**     the WAL write lock through xShmLock.
**
** The link from a database file to its connection's WAL file: SQLite's
** pager keeps the database, journal and WAL names of one connection in one
** allocation, and sqlite3_filename_database() on the WAL's name returns the
** very pointer the pager passed to xOpen for its database file. So a WAL
** file finds its database file by that pointer, among the open database
** files (a list under a mutex). A WAL file that finds none is not
** buffered: every method passes straight through.
**
** A failed flush is returned by the call that made it and leaves the WAL
** file failed: its buffer is dropped (it holds only frames of the
** transaction in progress, never published) and every later call on the
** WAL file returns the error, until it is closed.
**
** Thread safety: SQLite calls the methods of one connection's files from
** one thread at a time (multi-thread mode); only the list of open database
** files is shared, under wbMutex. The counters are atomic.
*/
#include <pthread.h>
#include <string.h>
#include "walbuf.h"

/* The bytes a buffer holds at most: the most the unix VFS's xWrite writes
** in one call (seekAndWriteFd masks the length with 0x1ffff; SQLite itself
** never writes more than a page, 64 KiB at most, at once). A larger commit
** takes one write per 128 KiB. */
#define WALBUF_MAX   0x1ffff
#define WALBUF_FIRST (1 << 16) /* its first allocation */
#define WAL_FRAME_HDRSIZE 24

typedef struct WbFile WbFile;
struct WbFile {
  sqlite3_file base;     /* this shim's methods */
  sqlite3_file *pReal;   /* the unix VFS's file: the bytes right after this */
  int rcErr;             /* WAL: a failed flush's error, returned by every call */
  /* A database file (SQLITE_OPEN_MAIN_DB) */
  const char *zName;     /* the pager's name pointer: a WAL file's key */
  WbFile *pWal;          /* its connection's WAL file, if open and linked */
  WbFile *pNext;         /* the list of open database files */
  int inList;
  /* A WAL file (SQLITE_OPEN_WAL) */
  WbFile *pDb;           /* its connection's database file; 0: not buffered */
  unsigned char *aBuf;   /* nBuf bytes buffered, for offset iBuf */
  int nBuf, nAlloc;
  sqlite3_int64 iBuf;
  sqlite3_int64 iEnd;    /* offset just past the last write; -1 at first */
  int through;           /* a commit header was written: flush each write */
};

static sqlite3_vfs *wbReal;         /* the "unix" VFS */
static sqlite3_vfs wbVfs;           /* this shim */
static sqlite3_io_methods wbMethods[3]; /* iVersion 1, 2, 3: as the real file's */
static pthread_mutex_t wbMutex = PTHREAD_MUTEX_INITIALIZER;
static WbFile *wbDbList;            /* open database files */

/* Counters (walbuf.go reads them). */
enum {
  WB_LINKED,     /* WAL files opened and linked to their database file */
  WB_UNLINKED,   /* WAL files opened without a link: not buffered */
  WB_WRITES_IN,  /* xWrite calls on linked WAL files */
  WB_WRITES_OUT, /* writes the shim made to linked WAL files */
  WB_COMMITS,    /* flushes made right after a commit frame */
  WB_DIRECT,     /* writes that did not continue the last: straight through */
  WB_FAILED,     /* failed flushes */
  WB_N
};
static long long wbStat[WB_N];
static int wbFailNext;              /* tests: the next flushes fail */

static void wbCount(int i){ __atomic_fetch_add(&wbStat[i], 1, __ATOMIC_RELAXED); }

/* Writes out a WAL file's buffer. On failure the file is failed. */
static int wbFlush(WbFile *p){
  int rc;
  if( p->rcErr ) return p->rcErr;
  if( p->nBuf==0 ) return SQLITE_OK;
  if( __atomic_load_n(&wbFailNext, __ATOMIC_RELAXED)>0
   && __atomic_fetch_sub(&wbFailNext, 1, __ATOMIC_RELAXED)>0 ){
    rc = SQLITE_IOERR_WRITE;
  }else{
    rc = p->pReal->pMethods->xWrite(p->pReal, p->aBuf, p->nBuf, p->iBuf);
    wbCount(WB_WRITES_OUT);
  }
  p->nBuf = 0;
  if( rc!=SQLITE_OK ){
    p->rcErr = rc;
    wbCount(WB_FAILED);
  }
  return rc;
}

/* Before a method of a WAL file: its sticky error, or a flush. */
static int wbWalFlush(WbFile *p){
  if( p->rcErr ) return p->rcErr;
  return p->pDb ? wbFlush(p) : SQLITE_OK;
}

/* Before a shm method of a database file: flush its WAL file. */
static int wbShmFlush(WbFile *p){
  WbFile *w = p->pWal;
  if( w==0 ) return SQLITE_OK;
  w->through = 0;
  return wbFlush(w);
}

/* Appends to the buffer; 0 if there is no room (the caller writes). */
static int wbAppend(WbFile *p, const void *z, int iAmt, sqlite3_int64 iOfst){
  if( iAmt>WALBUF_MAX || p->nBuf+iAmt>WALBUF_MAX ) return 0;
  if( p->nBuf+iAmt>p->nAlloc ){
    int n = p->nAlloc ? p->nAlloc : WALBUF_FIRST;
    unsigned char *a;
    while( n<p->nBuf+iAmt ) n *= 2;
    if( n>WALBUF_MAX ) n = WALBUF_MAX;
    a = sqlite3_realloc64(p->aBuf, n);
    if( a==0 ) return 0;
    p->aBuf = a;
    p->nAlloc = n;
  }
  if( p->nBuf==0 ) p->iBuf = iOfst;
  memcpy(p->aBuf+p->nBuf, z, iAmt);
  p->nBuf += iAmt;
  return 1;
}

static int wbWrite(sqlite3_file *f, const void *z, int iAmt, sqlite3_int64 iOfst){
  WbFile *p = (WbFile*)f;
  const unsigned char *a = z;
  int rc;
  if( p->rcErr ) return p->rcErr;
  if( p->pDb==0 ) return p->pReal->pMethods->xWrite(p->pReal, z, iAmt, iOfst);
  wbCount(WB_WRITES_IN);
  if( iOfst!=p->iEnd || p->nBuf+iAmt>WALBUF_MAX ){
    rc = wbFlush(p);
    if( rc ) return rc;
  }
  if( iOfst!=p->iEnd || !wbAppend(p, z, iAmt, iOfst) ){
    rc = wbFlush(p);
    if( rc ) return rc;
    rc = p->pReal->pMethods->xWrite(p->pReal, z, iAmt, iOfst);
    wbCount(WB_WRITES_OUT);
    wbCount(WB_DIRECT);
    if( rc ) return rc;
  }
  p->iEnd = iOfst+iAmt;
  if( iAmt==WAL_FRAME_HDRSIZE && (a[4]|a[5]|a[6]|a[7])!=0 ){
    p->through = 1;     /* a commit frame's header: its page comes next */
  }else if( p->through ){
    rc = wbFlush(p);    /* the commit's last write */
    wbCount(WB_COMMITS);
    return rc;
  }
  return SQLITE_OK;
}

static int wbClose(sqlite3_file *f){
  WbFile *p = (WbFile*)f;
  int rc = wbWalFlush(p), rc2;
  pthread_mutex_lock(&wbMutex);
  if( p->pDb ) p->pDb->pWal = 0;
  if( p->pWal ){ /* not SQLite's order (it closes the WAL first) */
    (void)wbFlush(p->pWal);  /* a failure leaves the WAL file failed */
    p->pWal->pDb = 0;        /* from now on unbuffered */
  }
  if( p->inList ){
    WbFile **pp = &wbDbList;
    while( *pp!=p ) pp = &(*pp)->pNext;
    *pp = p->pNext;
  }
  pthread_mutex_unlock(&wbMutex);
  sqlite3_free(p->aBuf);
  rc2 = p->pReal->pMethods->xClose(p->pReal);
  return rc ? rc : rc2;
}

/* The WAL file's other methods flush first; a database file's forward. */
#define REAL(p) ((p)->pReal->pMethods)
static int wbRead(sqlite3_file *f, void *z, int iAmt, sqlite3_int64 iOfst){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xRead(p->pReal, z, iAmt, iOfst);
}
static int wbTruncate(sqlite3_file *f, sqlite3_int64 size){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xTruncate(p->pReal, size);
}
static int wbSync(sqlite3_file *f, int flags){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xSync(p->pReal, flags);
}
static int wbFileSize(sqlite3_file *f, sqlite3_int64 *pSize){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xFileSize(p->pReal, pSize);
}
static int wbLock(sqlite3_file *f, int eLock){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xLock(p->pReal, eLock);
}
static int wbUnlock(sqlite3_file *f, int eLock){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xUnlock(p->pReal, eLock);
}
static int wbCheckReservedLock(sqlite3_file *f, int *pResOut){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xCheckReservedLock(p->pReal, pResOut);
}
static int wbFileControl(sqlite3_file *f, int op, void *pArg){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xFileControl(p->pReal, op, pArg);
}
static int wbSectorSize(sqlite3_file *f){
  WbFile *p = (WbFile*)f;
  return REAL(p)->xSectorSize(p->pReal);
}
static int wbDeviceCharacteristics(sqlite3_file *f){
  WbFile *p = (WbFile*)f;
  return REAL(p)->xDeviceCharacteristics(p->pReal);
}

/* Shared memory: called on the database file; flush its WAL file first. */
static int wbShmMap(sqlite3_file *f, int iPg, int pgsz, int bExtend, void volatile **pp){
  WbFile *p = (WbFile*)f; int rc = wbShmFlush(p);
  return rc ? rc : REAL(p)->xShmMap(p->pReal, iPg, pgsz, bExtend, pp);
}
static int wbShmLock(sqlite3_file *f, int offset, int n, int flags){
  WbFile *p = (WbFile*)f; int rc = wbShmFlush(p), rc2;
  if( rc && (flags & SQLITE_SHM_UNLOCK)==0 ) return rc;
  rc2 = REAL(p)->xShmLock(p->pReal, offset, n, flags); /* an unlock always */
  return rc ? rc : rc2;
}
static void wbShmBarrier(sqlite3_file *f){
  /* No error to return: a failure leaves the WAL file failed, and SQLite
  ** publishes a commit only after the flush that ends it succeeded. */
  WbFile *p = (WbFile*)f; (void)wbShmFlush(p);
  REAL(p)->xShmBarrier(p->pReal);
}
static int wbShmUnmap(sqlite3_file *f, int deleteFlag){
  WbFile *p = (WbFile*)f; (void)wbShmFlush(p);
  return REAL(p)->xShmUnmap(p->pReal, deleteFlag);
}
static int wbFetch(sqlite3_file *f, sqlite3_int64 iOfst, int iAmt, void **pp){
  WbFile *p = (WbFile*)f; int rc = wbWalFlush(p);
  return rc ? rc : REAL(p)->xFetch(p->pReal, iOfst, iAmt, pp);
}
static int wbUnfetch(sqlite3_file *f, sqlite3_int64 iOfst, void *pPage){
  WbFile *p = (WbFile*)f;
  return REAL(p)->xUnfetch(p->pReal, iOfst, pPage);
}

static int wbOpen(sqlite3_vfs *pVfs, sqlite3_filename zName, sqlite3_file *f,
                  int flags, int *pOutFlags){
  WbFile *p = (WbFile*)f;
  int rc, v;
  (void)pVfs;
  memset(p, 0, sizeof(*p));
  p->pReal = (sqlite3_file*)&p[1];
  p->iEnd = -1;
  rc = wbReal->xOpen(wbReal, zName, p->pReal, flags, pOutFlags);
  if( p->pReal->pMethods==0 ){
    p->base.pMethods = 0;  /* SQLite will not call xClose */
    return rc;
  }
  v = p->pReal->pMethods->iVersion;
  p->base.pMethods = &wbMethods[(v<1 ? 1 : v>3 ? 3 : v) - 1];
  if( rc!=SQLITE_OK ) return rc;
  if( (flags & SQLITE_OPEN_MAIN_DB) && zName ){
    p->zName = zName;
    pthread_mutex_lock(&wbMutex);
    p->pNext = wbDbList;
    wbDbList = p;
    p->inList = 1;
    pthread_mutex_unlock(&wbMutex);
  }else if( (flags & SQLITE_OPEN_WAL) && zName ){
    const char *zDb = sqlite3_filename_database(zName);
    WbFile *d;
    pthread_mutex_lock(&wbMutex);
    for(d=wbDbList; d; d=d->pNext){
      if( d->zName==zDb && d->pWal==0
       && d->base.pMethods->iVersion>=2 ){  /* it has shm methods */
        d->pWal = p;
        p->pDb = d;
        break;
      }
    }
    pthread_mutex_unlock(&wbMutex);
    wbCount(p->pDb ? WB_LINKED : WB_UNLINKED);
  }
  return rc;
}

/* Registers the VFS (not as the default). Returns an SQLite result code. */
int fairway_walbuf_register(const char *zName){
  static const sqlite3_io_methods m = {
    3, wbClose, wbRead, wbWrite, wbTruncate, wbSync, wbFileSize, wbLock,
    wbUnlock, wbCheckReservedLock, wbFileControl, wbSectorSize,
    wbDeviceCharacteristics, wbShmMap, wbShmLock, wbShmBarrier, wbShmUnmap,
    wbFetch, wbUnfetch
  };
  int i;
  if( sqlite3_vfs_find(zName) ) return SQLITE_OK;
  wbReal = sqlite3_vfs_find("unix");
  if( wbReal==0 ) return SQLITE_IOERR;
  for(i=0; i<3; i++){
    wbMethods[i] = m;
    wbMethods[i].iVersion = i+1;
  }
  /* The unix VFS's methods other than xOpen ignore their sqlite3_vfs
  ** argument (os_unix.c), so the shim shares them. */
  wbVfs = *wbReal;
  wbVfs.pNext = 0;
  wbVfs.zName = zName;
  wbVfs.szOsFile = (int)sizeof(WbFile) + wbReal->szOsFile;
  wbVfs.pAppData = 0;
  wbVfs.xOpen = wbOpen;
  return sqlite3_vfs_register(&wbVfs, 0);
}

/* Copies the counters into a (WB_N of them). */
int fairway_walbuf_stats(long long *a, int n){
  int i;
  for(i=0; i<n && i<WB_N; i++) a[i] = __atomic_load_n(&wbStat[i], __ATOMIC_RELAXED);
  return WB_N;
}

/* Tests: make the next n flushes fail with SQLITE_IOERR_WRITE. */
void fairway_walbuf_fail_flushes(int n){
  __atomic_store_n(&wbFailNext, n, __ATOMIC_RELAXED);
}
