package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/fairwayhq/fairway/api"
)

// CreateKey creates an API key (admin keys). The answer's Secret is shown
// this once: the server keeps only its hash.
func (c *Client) CreateKey(ctx context.Context, req api.KeyRequest) (api.KeyCreated, error) {
	var out api.KeyCreated
	_, err := c.do(ctx, call{method: http.MethodPost, path: "/keys", in: req, out: &out})
	return out, wrap("create key", err)
}

// Keys lists the stored keys ("" tenant: all), without their secrets.
func (c *Client) Keys(ctx context.Context, tenant string) (api.KeyList, error) {
	q := url.Values{}
	if tenant != "" {
		q.Set("tenant", tenant)
	}
	var out api.KeyList
	_, err := c.do(ctx, call{method: http.MethodGet, path: "/keys", query: q, out: &out})
	return out, wrap("list keys", err)
}

// RevokeKey deletes a stored key: it is refused from its next request on.
func (c *Client) RevokeKey(ctx context.Context, id string) error {
	_, err := c.do(ctx, call{method: http.MethodDelete, path: "/keys/" + url.PathEscape(id), out: &struct{}{}})
	return wrap("revoke key "+id, err)
}
