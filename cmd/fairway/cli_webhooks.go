package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
)

func init() {
	commands["webhooks"] = command{summary: "register, list and delete alert webhooks (create, list, delete)", run: runWebhooks}
}

const webhooksAbout = `Manages the alert webhooks registered through the API (admin keys;
docs/alerting.md). Those of the configuration file are listed too, and are
changed there.

  fairway webhooks create --name NAME --url URL --secret @FILE [--kind K] [--tenant T]
  fairway webhooks list
  fairway webhooks delete NAME

--secret (16 characters or more) signs each delivery; give it as @FILE or
- (stdin) to keep it out of the process list. --kind and --tenant take
comma lists or repeat; none: every kind, every tenant.`

var webhookVerbs = map[string]verbFunc{"create": webhooksCreate, "list": webhooksList, "delete": webhooksDelete}

func runWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runVerbs(ctx, "webhooks", "create|list|delete ...", webhooksAbout, webhookVerbs, args, stdout, stderr)
}

func webhooksCreate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("webhooks create", "--name NAME --url URL --secret S|@FILE|- [flags]", webhooksAbout, stdout, stderr)
	var req api.WebhookRequest
	var secret string
	c.fs.StringVar(&req.Name, "name", "", "the webhook's `name` (required)")
	c.fs.StringVar(&req.URL, "url", "", "the http:// or https:// `URL` alerts are posted to (required)")
	c.fs.StringVar(&secret, "secret", "", "the signing `secret`, 16+ characters: inline, @FILE or - for stdin (required)")
	kinds := c.filter("kind", "only alerts of these `kinds` (repeat or comma-separate; none: every kind)")
	tenants := c.filter("tenant", "only alerts of these `tenants` (repeat or comma-separate; none: every tenant)")
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	switch {
	case req.Name == "" || req.URL == "" || secret == "":
		return c.usageErr("--name, --url and --secret are required")
	}
	var err error
	if req.Secret, err = readSecret(secret); err != nil {
		return c.usageErr("%v", err)
	}
	req.Kinds, req.Tenants = kinds.values, tenants.values
	var out struct {
		Webhook api.Webhook `json:"webhook"`
	}
	if code := c.rawCall(ctx, http.MethodPost, "/webhooks", req, &out, "create webhook "+req.Name); code >= 0 {
		return code
	}
	if c.json {
		return c.done(c.printJSON(out))
	}
	_, err = fmt.Fprintf(c.stdout, "webhook %s created: %s gets %s\n", out.Webhook.Name, out.Webhook.URL, webhookScope(out.Webhook))
	return c.done(err)
}

func webhooksList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("webhooks list", "", webhooksAbout, stdout, stderr)
	if _, code := c.parseN(args, 0, "no arguments"); code >= 0 {
		return code
	}
	var out api.WebhookList
	if code := c.rawCall(ctx, http.MethodGet, "/webhooks", nil, &out, "list webhooks"); code >= 0 {
		return code
	}
	if c.json {
		out.Webhooks = emptyIfNil(out.Webhooks)
		return c.done(c.printJSON(out))
	}
	tw := c.table()
	tableRow(tw, "NAME", "URL", "KINDS", "TENANTS", "SOURCE", "CREATED", "BY")
	for _, h := range out.Webhooks {
		tableRow(tw, h.Name, h.URL, allIfEmpty(h.Kinds), allIfEmpty(h.Tenants), h.Source, timeText(h.CreatedAt), dashIfEmpty(h.CreatedBy))
	}
	return c.done(tw.Flush())
}

func webhooksDelete(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newCLI("webhooks delete", "NAME", webhooksAbout, stdout, stderr)
	pos, code := c.parseN(args, 1, "one webhook NAME")
	if code >= 0 {
		return code
	}
	var out map[string]string
	if code := c.rawCall(ctx, http.MethodDelete, "/webhooks/"+url.PathEscape(pos[0]), nil, &out, "delete webhook "+pos[0]); code >= 0 {
		return code
	}
	if c.json {
		return c.done(c.printJSON(out))
	}
	_, err := fmt.Fprintf(c.stdout, "webhook %s deleted\n", pos[0])
	return c.done(err)
}

// webhookScope says which alerts a webhook gets.
func webhookScope(h api.Webhook) string {
	return fmt.Sprintf("alerts of kinds %s, tenants %s", allIfEmpty(h.Kinds), allIfEmpty(h.Tenants))
}

func allIfEmpty(vs []string) string {
	if len(vs) == 0 {
		return "*"
	}
	return strings.Join(vs, ",")
}

// readSecret reads --secret: inline, @FILE or - (stdin), without the
// trailing newline a file or a pipe usually ends with.
func readSecret(v string) (string, error) {
	var data []byte
	var err error
	switch {
	case v == "-":
		data, err = io.ReadAll(io.LimitReader(stdin, 4096))
	case strings.HasPrefix(v, "@"):
		data, err = readFileLimited(v[1:], 4096)
	default:
		return v, nil
	}
	if err != nil {
		return "", fmt.Errorf("--secret %s: %w", v, err)
	}
	return strings.TrimRight(string(data), "\r\n"), nil
}

// rawHTTP is the HTTP client of rawCall: a webhook call is small, so a
// minute is ample.
var rawHTTP = &http.Client{Timeout: time.Minute}

// rawCall sends one request of the API that the Go SDK has no method for
// (the webhooks) to the server the common flags name, with their key, and
// decodes the answer into out. It returns -1 on success, else the exit
// code, having said what failed.
func (c *cli) rawCall(ctx context.Context, method, path string, in, out any, op string) int {
	if _, code := c.client(); code >= 0 { // checks --server and resolves it as every command does
		return code
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return c.fail(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.server, "/")+"/api/v1"+path, body)
	if err != nil {
		return c.usageErr("--server: %v", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "fairway-cli/1")
	if key := firstNonEmpty(c.apiKey, os.Getenv(envAPIKey)); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := rawHTTP.Do(req)
	if err != nil {
		return c.fail(fmt.Errorf("%s: %w", op, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return c.fail(fmt.Errorf("%s: %w", op, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.fail(fmt.Errorf("%s: %w", op, apiErrorOf(resp.StatusCode, data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.fail(fmt.Errorf("%s: the server's answer is not the API's JSON: %w", op, err))
	}
	return -1
}

// apiErrorOf is the API error a non-2xx answer carries, or one made of
// its status when the body is not the API's error JSON.
func apiErrorOf(status int, body []byte) error {
	e := &api.Error{Status: status}
	var er api.ErrorResponse
	if json.Unmarshal(body, &er) == nil && er.Error.Code != "" {
		e.ErrorBody = er.Error
		return e
	}
	e.Code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	e.Message = strings.TrimSpace(string(body))
	if len(e.Message) > 200 || e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}
