//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// setUserTimeout: TCP_USER_TIMEOUT is Linux's; elsewhere the keepalive
// probes and the statement timeout bound a silent connection.
func setUserTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
