package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// A database outage is never a 500: a commit whose connection broke is
// 503 maybe_applied, an unreachable database 503 unavailable, both with
// Retry-After; so is a broken connection the store did not name.
func TestADatabaseOutageIsAnswered503(t *testing.T) {
	s := &Server{}
	for _, c := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("commit: postgres: commit: %w: store: pipelined statements: %w", store.ErrMaybeApplied, io.ErrUnexpectedEOF), api.CodeMaybeApplied},
		{fmt.Errorf("commit: postgres: commit: store: pipelined statements: %w", io.ErrUnexpectedEOF), api.CodeMaybeApplied},
		{fmt.Errorf("x: %w", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}), api.CodeMaybeApplied},
		{fmt.Errorf("postgres: connect: %w: dial", store.ErrUnavailable), api.CodeServerUnavailable},
		{fmt.Errorf("store: get job j1: failed to connect: %w", &pgconn.PgError{Severity: "FATAL", Code: "53300", Message: "sorry, too many clients already"}), api.CodeServerUnavailable},
		{fmt.Errorf("store: list: %w", &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}), api.CodeServerUnavailable},
	} {
		ae := s.classify(c.err)
		if ae.status != http.StatusServiceUnavailable || ae.body.Code != c.code || ae.retryAfter <= 0 {
			t.Errorf("%v: %d %s Retry-After %d, want 503 %s with Retry-After", c.err, ae.status, ae.body.Code, ae.retryAfter, c.code)
		}
	}
}

// A statement the database refuses (not the connection) is not an outage.
func TestAStatementErrorIsNotAnOutage(t *testing.T) {
	ae := (&Server{}).classify(fmt.Errorf("x: %w", &pgconn.PgError{Code: "42601", Message: "syntax error"}))
	if ae.status != http.StatusInternalServerError {
		t.Errorf("a syntax error: %d %s, want 500", ae.status, ae.body.Code)
	}
}
