package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/fairwayhq/fairway/api"
)

// overLimitJob is a job spec 8 times maxBody: the client is still sending
// when the server meets the limit, and must read the 413 all the same.
func overLimitJob() string {
	return `{"type":"a","payload":{"p":"` + strings.Repeat("x", 8*maxBody) + `"}}`
}

// postPiped submits body to /api/v1/jobs the way a streaming Go client
// does: from an io.Pipe, in pieces, so the request goes out chunked.
func postPiped(t *testing.T, client *http.Client, url, body string) (*http.Response, []byte) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() {
		// The server may answer 413 before the whole body is sent: the
		// transport then closes pr and the rest of the writes fail.
		for rest := body; rest != ""; {
			n := min(len(rest), 64<<10)
			if _, err := io.WriteString(pw, rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
		pw.Close()
	}()
	req, err := http.NewRequest("POST", url+"/api/v1/jobs", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 0 && resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("answer framed with %v", resp.TransferEncoding)
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// A Go client streaming its body from an io.Pipe sends it chunked: it is
// accepted under the body limit, 413 body_too_large over it, and the
// connection is closed after either answer.
func TestChunkedBodyFromGoPipe(t *testing.T) {
	h := newHarness(t, defaultConfig())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	resp, body := postPiped(t, client, h.http.URL, `{"type":"a","name":"piped","payload":{"n":1}}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("chunked submit under the limit: HTTP %d %s", resp.StatusCode, body)
	}
	if !resp.Close {
		t.Errorf("the answer to a chunked request keeps the connection open (want Connection: close)")
	}
	var sub api.SubmitResponse
	if err := json.Unmarshal(body, &sub); err != nil {
		t.Fatal(err)
	}
	if got := h.get(sub.Job.ID); got.Name != "piped" || string(got.Payload) != `{"n":1}` {
		t.Fatalf("stored job: name %q payload %s", got.Name, got.Payload)
	}

	resp, body = postPiped(t, client, h.http.URL, overLimitJob())
	var e api.ErrorResponse
	if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(body, &e) != nil || e.Error.Code != api.CodeBodyTooLarge {
		t.Fatalf("chunked submit over the limit: HTTP %d %s, want 413 %s", resp.StatusCode, body, api.CodeBodyTooLarge)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 1 {
		t.Fatalf("%d jobs stored, want the one under the limit", len(list.Jobs))
	}
}

// curl -T - uploads stdin chunked: accepted under the limit, 413 over it.
func TestChunkedBodyFromCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: the curl -T - client is not tested")
	}
	h := newHarness(t, defaultConfig())
	run := func(stdin string) (status int, body string) {
		t.Helper()
		cmd := exec.Command(curl, "-sS", "-v", "-X", "POST", "-T", "-", "-H", "Content-Type: application/json",
			"-w", "\n%{http_code}", h.http.URL+"/api/v1/jobs")
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("curl: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(strings.ToLower(stderr.String()), "> transfer-encoding: chunked") {
			t.Fatalf("curl did not send the body chunked:\n%s", stderr.String())
		}
		out := stdout.String()
		i := strings.LastIndexByte(out, '\n')
		if _, err := fmt.Sscan(out[i+1:], &status); err != nil {
			t.Fatalf("curl output %q: %v", out, err)
		}
		return status, out[:i]
	}

	status, body := run(`{"type":"a","name":"from-curl"}`)
	if status != http.StatusCreated {
		t.Fatalf("curl -T - under the limit: HTTP %d %s", status, body)
	}
	var sub api.SubmitResponse
	if err := json.Unmarshal([]byte(body), &sub); err != nil {
		t.Fatal(err)
	}
	if got := h.get(sub.Job.ID); got.Name != "from-curl" {
		t.Fatalf("stored job named %q", got.Name)
	}

	status, body = run(overLimitJob())
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, api.CodeBodyTooLarge) {
		t.Fatalf("curl -T - over the limit: HTTP %d %s, want 413 %s", status, body, api.CodeBodyTooLarge)
	}
}

// An empty chunked body where the body is optional (a lane's pause note)
// is no body, as an empty Content-Length body is.
func TestEmptyChunkedBodyIsNoBody(t *testing.T) {
	h := newHarness(t, defaultConfig())
	addr := strings.TrimPrefix(h.http.URL, "http://")
	req := "POST /api/v1/lanes/default/pause HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
	if status, body := rawRequest(t, addr, req); !strings.HasPrefix(status, "200") {
		t.Fatalf("pause with an empty chunked body: %s %s", status, body)
	}
}

// A transfer coding other than chunked alone is refused by the HTTP layer
// (501), as docs/api.md says, and stores nothing.
func TestOtherTransferCodingsAreNotImplemented(t *testing.T) {
	h := newHarness(t, defaultConfig())
	addr := strings.TrimPrefix(h.http.URL, "http://")
	req := "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
	if status, body := rawRequest(t, addr, req); !strings.HasPrefix(status, "501") {
		t.Fatalf("Transfer-Encoding: gzip, chunked: %s %s, want 501", status, body)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("stored jobs: %+v", list.Jobs)
	}
}
