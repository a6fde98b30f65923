package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/fairwayhq/fairway/internal/config"
)

// guardExposure applies the open-mode rules before the server starts. A
// server with no API keys configured treats every caller as admin, so it
// may listen on a loopback address only, unless --insecure says the
// operator means it; either way it says so at WARN. A config file that
// holds keys and is readable by group or others is warned about.
func (f *serverFlags) guardExposure(cfg config.Config, log *slog.Logger) error {
	if cfg.Open() {
		if !loopbackOnly(cfg.Server.Listen) && !f.insecure {
			return fmt.Errorf("refusing to listen on %s with no API keys configured: anyone who can reach it would be admin. "+
				"Configure keys (admin_keys, tenants.NAME.api_keys, workers.api_keys), listen on 127.0.0.1, "+
				"or pass --insecure if you mean it", cfg.Server.Listen)
		}
		log.Warn("open mode: no API keys are configured, so anyone who can reach this server is admin "+
			"(submits as any tenant, cancels any job, registers workers); configure keys before exposing it",
			"listen", cfg.Server.Listen, "insecure", f.insecure)
	}
	if f.configPath != "" && !cfg.Open() {
		if st, err := os.Stat(f.configPath); err == nil && st.Mode().Perm()&0o077 != 0 {
			log.Warn("the config file holds API keys and is readable by group or others: chmod 600 it",
				"path", f.configPath, "mode", fmt.Sprintf("%04o", st.Mode().Perm()))
		}
	}
	return nil
}

// loopbackOnly reports whether addr (host:port) listens on a loopback
// address only: 127.0.0.0/8, ::1 or localhost. An empty host listens on
// every interface.
func loopbackOnly(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
