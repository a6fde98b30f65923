package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// SummaryOptions filters the failure, success and SLA reports. Zero values
// are left out.
type SummaryOptions struct {
	Since  time.Time
	Until  time.Time
	Type   string
	Tenant string // admin keys only
}

func (o SummaryOptions) query() url.Values {
	q := url.Values{}
	setTime(q, "since", o.Since)
	setTime(q, "until", o.Until)
	setIf(q, "type", o.Type)
	setIf(q, "tenant", o.Tenant)
	return q
}

// Failures reports failed executions by outcome and class, with the most
// recent ones (GET /failures).
func (c *Client) Failures(ctx context.Context, opts SummaryOptions) (api.FailureReport, error) {
	var out api.FailureReport
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/failures", query: opts.query(), out: &out})
	return out, wrap("failures", err)
}

// Successes reports succeeded executions with run-time percentiles
// (GET /successes).
func (c *Client) Successes(ctx context.Context, opts SummaryOptions) (api.SuccessReport, error) {
	var out api.SuccessReport
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/successes", query: opts.query(), out: &out})
	return out, wrap("successes", err)
}

// SLACompliance reports how many finished jobs met their SLA.
func (c *Client) SLACompliance(ctx context.Context, opts SummaryOptions) (api.SLAReport, error) {
	var out api.SLAReport
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/sla-compliance", query: opts.query(), out: &out})
	return out, wrap("SLA compliance", err)
}

// Workers lists the registered workers.
func (c *Client) Workers(ctx context.Context) ([]api.WorkerInfo, error) {
	var out api.WorkerList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/workers", out: &out})
	return out.Workers, wrap("list workers", err)
}

// Lanes returns every lane's load and the pool's capacity.
func (c *Client) Lanes(ctx context.Context) (api.LaneList, error) {
	var out api.LaneList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/lanes", out: &out})
	return out, wrap("list lanes", err)
}

// Costs returns what fair queuing ranks jobs of equal priority by: each
// fairness key's accumulated cost and the learned run times (GET
// /lanes?costs=true; admin and worker keys).
func (c *Client) Costs(ctx context.Context) (api.Costs, error) {
	var out api.LaneList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/lanes", query: url.Values{"costs": {"true"}}, out: &out})
	if err != nil {
		return api.Costs{}, wrap("read costs", err)
	}
	if out.Costs == nil {
		return api.Costs{}, wrap("read costs", errors.New("the server sent no costs: it predates GET /lanes?costs=true"))
	}
	return *out.Costs, nil
}

// Tenants returns each tenant's load against its limits and quota (a
// tenant key: its own).
func (c *Client) Tenants(ctx context.Context) ([]api.TenantUsage, error) {
	var out api.TenantList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/tenants", out: &out})
	return out.Tenants, wrap("list tenants", err)
}

// Health checks that the server process is up (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	return c.probe(ctx, "/healthz")
}

// Ready checks that the server can serve: its store is open and its
// dispatcher running (GET /readyz).
func (c *Client) Ready(ctx context.Context) error {
	return c.probe(ctx, "/readyz")
}

func (c *Client) probe(ctx context.Context, path string) error {
	req, err := c.newRequest(ctx, http.MethodGet, c.BaseURL()+path, nil, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return wrap(path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return wrap(path, decodeError(resp))
	}
	return wrap(path, decodeBody(resp.Body, nil))
}

// PauseLane pauses a lane (admin keys): it leases nothing until resumed;
// its running jobs finish. Result is paused or already_paused.
func (c *Client) PauseLane(ctx context.Context, lane, note string) (api.LaneActionResponse, error) {
	var out api.LaneActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/lanes/" + url.PathEscape(lane) + "/pause",
		in: api.PauseLaneRequest{Note: note}, out: &out})
	return out, wrap("pause lane "+lane, err)
}

// ResumeLane resumes a paused lane. Result is resumed or not_paused.
func (c *Client) ResumeLane(ctx context.Context, lane string) (api.LaneActionResponse, error) {
	var out api.LaneActionResponse
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/lanes/" + url.PathEscape(lane) + "/resume", in: struct{}{}, out: &out})
	return out, wrap("resume lane "+lane, err)
}

// UsageOptions select a usage report. Zero values are left out: the server
// then reports the last 24 hours by tenant.
type UsageOptions struct {
	Since, Until time.Time
	By           string // tenant or lane
}

// Usage reports, per tenant or lane, what the attempts finished in a
// window used (GET /usage).
func (c *Client) Usage(ctx context.Context, opts UsageOptions) (api.UsageReport, error) {
	q := url.Values{}
	setTime(q, "since", opts.Since)
	setTime(q, "until", opts.Until)
	setIf(q, "by", opts.By)
	var out api.UsageReport
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/usage", query: q, out: &out})
	return out, wrap("usage", err)
}
