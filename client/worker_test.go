package client

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestWorkerProtocol(t *testing.T) {
	ctx := context.Background()
	exit0 := 0
	attempts := []api.JobAttempt{{JobID: "j1", Attempt: 3, StartedAt: &t0}}
	items := api.ItemResults{Results: []api.ItemResult{{JobID: "j1", OK: true}, {JobID: "j2", Error: &api.ErrorBody{Code: api.CodeStaleAttempt, Message: "attempt 2 is not current"}}}}
	hb := api.HeartbeatResponse{LeaseExpiresAt: t0, Cancel: []api.JobAttempt{{JobID: "j1", Attempt: 3}}, Revoked: []api.JobAttempt{{JobID: "j2", Attempt: 2}}}
	cases := map[string]struct {
		answer any
		call   func(c *Client) (any, error)
		want   any
		path   string
		body   string
	}{
		"register": {
			answer: api.RegisterResponse{WorkerID: "w/1", LeaseTTLMS: 30000, HeartbeatIntervalMS: 10000},
			want:   api.RegisterResponse{WorkerID: "w/1", LeaseTTLMS: 30000, HeartbeatIntervalMS: 10000},
			path:   "/api/v1/workers/register", body: `{"name":"h1","types":["pdf"],"handlers":null,"slots":4,"cpu":8}`,
			call: func(c *Client) (any, error) {
				return c.Register(ctx, api.RegisterRequest{Name: "h1", Types: []string{"pdf"}, Slots: 4, CPU: 8})
			},
		},
		"lease": {
			answer: api.LeaseResponse{Leases: []api.Lease{{Job: job("j1", api.StateLeased), Attempt: 3, LeaseExpiresAt: t0}}},
			want:   []api.Lease{{Job: job("j1", api.StateLeased), Attempt: 3, LeaseExpiresAt: t0}},
			path:   "/api/v1/workers/w%2F1/lease", body: `{"max":4,"wait_ms":30000}`,
			call: func(c *Client) (any, error) { return c.Lease(ctx, "w/1", 4, 30*time.Second) },
		},
		"start": {
			answer: items, want: items.Results,
			path: "/api/v1/workers/w%2F1/start", body: `{"jobs":[{"job_id":"j1","attempt":3,"started_at":"2026-11-21T06:00:00Z"}]}`,
			call: func(c *Client) (any, error) { return c.Start(ctx, "w/1", attempts) },
		},
		"heartbeat": {
			answer: hb, want: hb,
			path: "/api/v1/workers/w%2F1/heartbeat", body: `{"jobs":[{"job_id":"j1","attempt":3}]}`,
			call: func(c *Client) (any, error) {
				return c.Heartbeat(ctx, "w/1", []api.JobAttempt{{JobID: "j1", Attempt: 3}})
			},
		},
		"complete": {
			answer: items, want: items.Results,
			path: "/api/v1/workers/w%2F1/complete", body: `{"results":[{"job_id":"j1","attempt":3,"outcome":"succeeded","exit_code":0}]}`,
			call: func(c *Client) (any, error) {
				return c.Complete(ctx, "w/1", []api.Completion{{JobID: "j1", Attempt: 3, Outcome: api.OutcomeSucceeded, ExitCode: &exit0}})
			},
		},
		"logs": {
			answer: api.LogAppendResponse{Accepted: 1}, want: 1,
			path: "/api/v1/workers/w%2F1/logs", body: `{"chunks":[{"job_id":"j1","attempt":1,"stream":"stdout","seq":1,"at":"2026-11-21T06:00:00Z","data":"x"}]}`,
			call: func(c *Client) (any, error) {
				return c.AppendLogs(ctx, "w/1", []api.LogChunk{chunk(1, "stdout", "x")})
			},
		},
		"deregister": {
			answer: struct{}{}, want: nil,
			path: "/api/v1/workers/w%2F1/deregister", body: `{}`,
			call: func(c *Client) (any, error) { return nil, c.Deregister(ctx, "w/1") },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, f := newFake(t, reply(200, tc.answer))
			got, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got)\n%s", diff)
			}
			s := f.last(t)
			wantReq(t, s, "POST", tc.path, nil)
			if string(s.Body) != tc.body {
				t.Errorf("body %s\nwant %s", s.Body, tc.body)
			}
		})
	}
}

func TestItemResultErrors(t *testing.T) {
	c, _ := newFake(t, reply(200, api.ItemResults{Results: []api.ItemResult{
		{JobID: "j1", OK: true},
		{JobID: "j2", Error: &api.ErrorBody{Code: api.CodeStaleAttempt, Message: "lease expired"}},
	}}))
	res, err := c.Complete(context.Background(), "w1", []api.Completion{{JobID: "j1", Attempt: 1}, {JobID: "j2", Attempt: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if ResultError(res[0]) != nil || !IsStaleAttempt(ResultError(res[1])) {
		t.Errorf("results %+v", res)
	}
	if got := ResultError(res[1]).Error(); got != "stale_attempt (409): lease expired" {
		t.Errorf("message %q", got)
	}
}

func TestUnknownWorker(t *testing.T) {
	c, _ := newFake(t, apiError(http.StatusNotFound, api.CodeNotFound, "no worker w1"))
	_, err := c.Heartbeat(context.Background(), "w1", nil)
	if !IsNotFound(err) {
		t.Errorf("err %v", err)
	}
}
