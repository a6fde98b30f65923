package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitExit waits (bounded) for a process that should stop by itself and
// returns its exit code.
func waitExit(t *testing.T, p *proc, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%s still running after %s", p.name, within)
	}
	return p.cmd.ProcessState.ExitCode()
}

// Issue 9 item 7: a port in use is explained with the flag that picks
// another, and no data directory is created.
func TestServerOnAPortInUseSaysHowToPickAnother(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, cmd := range []string{"server", "dev"} {
		data := filepath.Join(t.TempDir(), "fairway-data")
		p := start(t, cmd, cmd, "--listen", busy.Addr().String(), "--data", data)
		if code := waitExit(t, p, 20*time.Second); code == 0 {
			t.Errorf("%s exited 0", cmd)
		}
		if out := p.output(); !strings.Contains(out, "already in use") || !strings.Contains(out, "--listen") {
			t.Errorf("%s: the error does not explain the port or name --listen:\n%s", cmd, out)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("%s created its data directory although it could not listen (stat: %v)", cmd, err)
		}
	}
}
