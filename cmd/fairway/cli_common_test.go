package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// Usage errors exit 2 with "fairway: CMD: ..." and never reach the server.
func TestCLIUsageErrors(t *testing.T) {
	f := newAPIFake(t, nil)
	cases := map[string]struct {
		args []string
		want string
	}{
		"unknown flag":          {[]string{"status", "--bogus", "j1"}, "fairway: status: unknown flag --bogus\n"},
		"status without ID":     {[]string{"status"}, "fairway: status: want one job ID, got 0 argument(s)"},
		"status with two IDs":   {[]string{"status", "j1", "j2"}, "want one job ID, got 2"},
		"cancel without ID":     {[]string{"cancel"}, "fairway: cancel: want one job ID"},
		"explain two IDs":       {[]string{"explain", "a", "b"}, "fairway: explain: want one job ID"},
		"list with argument":    {[]string{"list", "x"}, "fairway: list: want no arguments"},
		"workers with argument": {[]string{"workers", "x"}, "fairway: workers: want no arguments"},
		"lanes with argument":   {[]string{"lanes", "x"}, "fairway: lanes: want no arguments"},
		"bad --limit":           {[]string{"list", "--limit", "ten"}, "fairway: list: --limit: want a whole number, got \"ten\"\n"},
		"priority not integer":  {[]string{"reprioritize", "j1", "high"}, `fairway: reprioritize: PRIORITY: want an integer, got "high"`},
		"reprioritize one arg":  {[]string{"reprioritize", "j1"}, "want a job ID and a PRIORITY"},
		"submit without type":   {[]string{"submit", "--", "echo"}, "fairway: submit: want one job TYPE"},
		"submit command no --":  {[]string{"submit", "report", "echo", "hi"}, "want one job TYPE and the command after --, got 3"},
		"submit bad --retry":    {[]string{"submit", "report", "--retry", "sometimes"}, `--retry: want fixed, exponential or immediate, got "sometimes"`},
		"submit bad --sla":      {[]string{"submit", "report", "--sla", "lax"}, `--sla: want strict, flexible or warning_only`},
		"submit bad --env":      {[]string{"submit", "report", "--env", "NOVALUE"}, `--env: want K=V, got "NOVALUE"`},
		"submit bad --run-at":   {[]string{"submit", "report", "--run-at", "tomorrow"}, `--run-at: want RFC 3339`},
		"submit bad +duration":  {[]string{"submit", "report", "--run-at", "+soon"}, `--run-at: want RFC 3339 or +DURATION`},
		"submit bad --after":    {[]string{"submit", "report", "--after", "j1:maybe"}, `--after: want ID or ID:success|failure|any, got "j1:maybe"`},
		"submit bad --payload":  {[]string{"submit", "report", "--payload", "{x"}, "--payload: not valid JSON"},
		"submit bad --priority": {[]string{"submit", "report", "--priority", "1e3"}, "--priority: not an integer, got \"1e3\"\n"},
		"flag without value":    {[]string{"list", "--limit"}, "fairway: list: --limit needs a value\n"},
		"bool with a value":     {[]string{"list", "--all=maybe"}, `fairway: list: --all takes no value (or =true, =false), got "maybe"`},
		"unknown state":         {[]string{"list", "--state", "bogus"}, `fairway: list: --state: unknown state "bogus"; the states are blocked, pending, leased, running, retry_wait, succeeded, failed, cancelled`},
		"submit neg --timeout":  {[]string{"submit", "report", "--timeout", "-1s"}, "must not be negative"},
		"logs bad --stream":     {[]string{"logs", "j1", "--stream", "both"}, `--stream: want stdout or stderr, got "both"`},
		"logs neg --attempt":    {[]string{"logs", "j1", "--attempt", "-1"}, "--attempt: must not be negative"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, f.URL, tc.args[0], tc.args[1:]...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, tc.want)
			}
			if !strings.Contains(errOut, "Run 'fairway "+tc.args[0]+" -h' for usage.") {
				t.Errorf("no usage hint: %q", errOut)
			}
		})
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

func TestCLIBadServerURL(t *testing.T) {
	code, _, errOut := runCmd(t, "status", "--server", "ftp://h", "j1")
	if code != exitUsage || !strings.Contains(errOut, "fairway: status: --server:") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestCLIHelp(t *testing.T) {
	for _, cmd := range []string{"submit", "status", "list", "cancel", "reprioritize", "logs", "explain", "workers", "lanes"} {
		code, out, errOut := runCmd(t, cmd, "-h")
		if code != exitOK || out != "" || !strings.HasPrefix(errOut, "usage: fairway "+cmd+" ") ||
			!strings.Contains(errOut, "-server URL") || !strings.Contains(errOut, "-json") {
			t.Errorf("%s -h: exit %d, stderr %q", cmd, code, errOut)
		}
	}
}

// Exit codes scripts rely on: 3 not found, 4 refused, 5 unreachable or 5xx.
func TestCLIExitCodes(t *testing.T) {
	cases := map[string]struct {
		h    http.HandlerFunc
		code int
		want string
	}{
		"not found":       {replyError(404, api.CodeNotFound, "no job j1"), exitNotFound, "fairway: get job j1: not_found (404): no job j1\n"},
		"unauthenticated": {replyError(401, api.CodeUnauthenticated, "missing API key"), exitAPI, "fairway: get job j1: unauthenticated (401): missing API key\n"},
		"forbidden":       {replyError(403, api.CodePermissionDenied, "another tenant's job"), exitAPI, "permission_denied (403)"},
		"rate limited":    {replyError(429, api.CodeRateLimited, "slow down"), exitAPI, "rate_limited (429)"},
		"internal":        {replyError(500, api.CodeInternal, "bug"), exitUnavailable, "fairway: get job j1: internal (500): bug\n"},
		"overloaded":      {replyError(503, api.CodeOverloaded, "shutting down"), exitUnavailable, "overloaded (503)"},
		"proxy page":      {func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad gateway", http.StatusBadGateway) }, exitUnavailable, "unavailable (502): bad gateway"},
		"malformed JSON":  {func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{")) }, exitUnavailable, "decode response"},
	}
	t.Setenv(envRetryDeadline, "0s") // a proxy's 502 would be retried
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/jobs/{id}": tc.h})
			code, out, errOut := runCLI(t, f.URL, "status", "j1")
			if code != tc.code || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestCLIUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	code, _, errOut := runCLI(t, url, "list")
	if code != exitUnavailable || !strings.HasPrefix(errOut, "fairway: cannot reach the server at "+url+": ") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --server and --api-key default to $FAIRWAY_SERVER and $FAIRWAY_API_KEY.
func TestCLIEnvDefaults(t *testing.T) {
	f := newAPIFake(t, map[string]http.HandlerFunc{"GET /api/v1/workers": replyWith(200, api.WorkerList{})})
	t.Setenv(envServer, f.URL)
	t.Setenv(envAPIKey, "secret-1")
	if code, _, errOut := runCmd(t, "workers"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := f.only(t).Header.Get("Authorization"); got != "Bearer secret-1" {
		t.Errorf("Authorization %q", got)
	}
	code, _, _ := runCmd(t, "workers", "--api-key", "flag-key")
	if got := f.requests()[1].Header.Get("Authorization"); code != 0 || got != "Bearer flag-key" {
		t.Errorf("--api-key does not win over the environment: %q", got)
	}
}

// Something other than fairway at the URL (a static web server) is named
// as such, exit 5, without its HTML.
func TestCLISomethingElseAtTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
		} else {
			w.WriteHeader(http.StatusNotImplemented)
		}
		_, _ = w.Write([]byte("<!DOCTYPE HTML>\n<html><body>Error response</body></html>\n"))
	}))
	defer srv.Close()
	for _, args := range [][]string{{"status", "j1"}, {"submit", "report", "--", "true"}, {"list"}} {
		code, out, errOut := runCLI(t, srv.URL, args[0], args[1:]...)
		want := "does not look like a fairway server at " + srv.URL
		if code != exitUnavailable || out != "" || !strings.Contains(errOut, want) ||
			!strings.Contains(errOut, "check --server / FAIRWAY_SERVER") || strings.Contains(errOut, "DOCTYPE") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 5 and %q", args[0], code, out, errOut, want)
		}
	}
}

// A submit against three instances, the first silent (it accepts the
// connection and never answers), goes through the second within the
// client's deadline.
func TestCLISubmitFailsOverFromASilentInstance(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered
		}
	}()
	defer ln.Close()
	f := newAPIFake(t, map[string]http.HandlerFunc{"POST /api/v1/jobs": replyWith(201, api.SubmitResponse{Job: testJob("j1", api.StatePending)})})
	t.Setenv(envRequestTimeout, "500ms")
	began := time.Now()
	code, out, errOut := runCLI(t, "http://"+ln.Addr().String()+","+f.URL+","+f.URL, "submit", "report", "--", "true")
	if code != exitOK || !strings.Contains(out, "j1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if req := f.only(t); len(req.Header.Get(api.SubmitTokenHeader)) != 32 {
		t.Errorf("the submit carried token %q, want one the client drew", req.Header.Get(api.SubmitTokenHeader))
	}
	t.Logf("through the second instance after %s", time.Since(began))
}
