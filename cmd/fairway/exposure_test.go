package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenServerRefusesANonLoopbackListen(t *testing.T) {
	for _, cmd := range []string{"server", "dev"} {
		for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:7070"} {
			code, _, errOut := runCmd(t, cmd, "--listen", addr, "--data", t.TempDir())
			if code != 2 || !strings.Contains(errOut, "no API keys configured") || !strings.Contains(errOut, "--insecure") {
				t.Errorf("%s --listen %s: exit %d, stderr %q", cmd, addr, code, errOut)
			}
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7070": true, "127.1.2.3:1": true, "[::1]:7070": true, "localhost:7070": true,
		"0.0.0.0:7070": false, ":7070": false, "[::]:1": false, "10.0.0.1:1": false, "bad": false,
	} {
		if got := loopbackOnly(addr); got != want {
			t.Errorf("loopbackOnly(%q) = %v, want %v", addr, got, want)
		}
	}
}

// A config file holding keys that group or others can read is warned
// about; a refused start needs no server, so the warning is checked on a
// config whose listen address is taken.
func TestConfigWithKeysReadableByOthersIsWarnedAbout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fairway.yaml")
	yaml := "admin_keys: [\"admin-key-0123456789\"]\nserver:\n  listen: \"bad address\"\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := runCmd(t, "server", "--config", path, "--data", dir)
	if !strings.Contains(errOut, "readable by group or others") {
		t.Errorf("0644 config with keys: stderr %q, want the permission warning", errOut)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, errOut = runCmd(t, "server", "--config", path, "--data", dir)
	if strings.Contains(errOut, "readable by group or others") {
		t.Errorf("0600 config: stderr %q has the permission warning", errOut)
	}
}
