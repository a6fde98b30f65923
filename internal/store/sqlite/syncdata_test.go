package sqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// syncData syncs an open file, and a failed sync (here: a closed file)
// is an error, which the syncer turns into a failed store.
func TestSyncDataReportsFailure(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "wal"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 8192)); err != nil {
		t.Fatal(err)
	}
	if err := syncData(f); err != nil {
		t.Fatalf("sync of an open file: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syncData(f); err == nil {
		t.Fatal("sync of a closed file: no error")
	}
}
