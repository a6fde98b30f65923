package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// TestOpenPreallocatesANewWAL: a store opened on a new database has a WAL
// file of walPreallocBytes; a clean close removes it (SQLite's last
// connection does), and what the store committed is there after a reopen.
func TestOpenPreallocatesANewWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fairway.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != walPreallocBytes {
		t.Errorf("new WAL file of %d bytes, want %d", fi.Size(), walPreallocBytes)
	}
	id := store.NewID(time.Now())
	if err := s.Write(ctx, insertJob(ctx, id)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !os.IsNotExist(err) {
		t.Errorf("WAL file left after a clean close (%v): the next Open would not preallocate", err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.JobGet(ctx, id); err != nil {
		t.Fatalf("the job committed before the reopen: %v", err)
	}
}

// TestOpenWithoutWALPreallocation: 0 leaves the WAL to SQLite.
func TestOpenWithoutWALPreallocation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fairway.db")
	s, err := Open(context.Background(), path, WithWALPreallocation(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() >= walPreallocBytes {
		t.Errorf("WAL file of %d bytes with preallocation off", fi.Size())
	}
}

// TestPreallocationLeavesAnExistingWALAlone: a WAL file that exists may
// hold committed frames; it is neither written nor resized.
func TestPreallocationLeavesAnExistingWALAlone(t *testing.T) {
	dir := t.TempDir()
	db, wal := filepath.Join(dir, "fairway.db"), filepath.Join(dir, "fairway.db-wal")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	frames := []byte("frames a crash left behind")
	if err := os.WriteFile(wal, frames, 0o600); err != nil {
		t.Fatal(err)
	}
	created, err := preallocateWAL(db, 1<<20)
	if err != nil || created {
		t.Fatalf("preallocateWAL on an existing WAL: created %v, %v", created, err)
	}
	got, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, frames) {
		t.Errorf("existing WAL changed to %d bytes", len(got))
	}
}

// TestPreallocatedWALTakesTheDatabasePermissions: SQLite gives a WAL it
// creates the database file's mode, whatever the umask; so does
// preallocation (0664 is what a umask of 022 would narrow), and the file
// is zeros.
func TestPreallocatedWALTakesTheDatabasePermissions(t *testing.T) {
	dir := t.TempDir()
	db, wal := filepath.Join(dir, "fairway.db"), filepath.Join(dir, "fairway.db-wal")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0o664); err != nil {
		t.Fatal(err)
	}
	const size = 3<<20 + 5 // not a whole number of fill chunks
	created, err := preallocateWAL(db, size)
	if err != nil || !created {
		t.Fatalf("created %v, %v", created, err)
	}
	fi, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o664 || fi.Size() != size {
		t.Errorf("WAL mode %v size %d, want -rw-rw-r-- and %d", fi.Mode().Perm(), fi.Size(), size)
	}
	got, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, make([]byte, size)) {
		t.Error("the preallocated WAL is not zeros")
	}
}

// TestCrashImageOfAPreallocatedWALRecovers: the database file and the WAL
// as a crash leaves them (copied while the store is open, after the
// commits were reported durable and with no checkpoint since they began)
// open with every acknowledged commit: recovery reads the frames and
// stops at the zeros after them.
func TestCrashImageOfAPreallocatedWALRecovers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "fairway.db")
	s, err := Open(ctx, path, WithCheckpointInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for range 50 {
		id := store.NewID(time.Now())
		if err := s.Write(ctx, insertJob(ctx, id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	image := filepath.Join(dir, "image")
	if err := os.Mkdir(image, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fairway.db-wal", "fairway.db"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "fairway.db-wal" {
			if int64(len(b)) != walPreallocBytes || !bytes.Equal(b[len(b)-pageSize:], make([]byte, pageSize)) {
				t.Fatalf("WAL of %d bytes not ending in zeros: the image would not test recovery over them", len(b))
			}
		}
		if err := os.WriteFile(filepath.Join(image, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(ctx, filepath.Join(image, "fairway.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, id := range ids {
		if _, err := r.JobGet(ctx, id); err != nil {
			t.Fatalf("acknowledged job %s lost in the crash image: %v", id, err)
		}
	}
}
