package e2e

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/client"
)

// An open server (no keys) listens beyond loopback only with --insecure,
// and says at WARN that anyone who reaches it is admin.
func TestOpenServerOnAllInterfacesNeedsInsecure(t *testing.T) {
	dir := t.TempDir()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	refused := start(t, "refused", "server", "--listen", "0.0.0.0:"+port, "--data", filepath.Join(dir, "a"))
	select {
	case <-refused.done:
	case <-time.After(20 * time.Second):
		t.Fatal("an open server on 0.0.0.0 without --insecure is still running")
	}
	if code := refused.cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(refused.output(), "--insecure") {
		t.Fatalf("without --insecure: exit %d\n%s", code, refused.output())
	}
	srv := start(t, "insecure", "server", "--insecure", "--listen", "0.0.0.0:"+port, "--data", filepath.Join(dir, "b"))
	c, err := client.New("http://127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the --insecure server to be ready", func() bool { return c.Ready(context.Background()) == nil })
	if out := srv.output(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "anyone who can reach this server is admin") {
		t.Fatalf("no open-mode WARN line:\n%s", out)
	}
}
