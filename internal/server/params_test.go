package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/config"
)

func TestUnknownQueryParameterIsRefused(t *testing.T) {
	h := newHarness(t, defaultConfig())
	for _, path := range []string{"/jobs?stat=running", "/lanes?tenant=x", "/jobs/x/events?after=3", "/failures?sinse=2026-01-01T00:00:00Z"} {
		var r api.ErrorResponse
		if code := h.do("GET", path, nil, &r); code != http.StatusBadRequest || r.Error.Code != api.CodeUnknownParameter || r.Error.Field == "" {
			t.Errorf("GET %s: HTTP %d %+v, want 400 unknown_parameter naming it", path, code, r.Error)
		}
	}
}

func TestListStatusFilterAndCount(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.AcceptUnrunnable = true
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"a"}})
	done := h.runOnce(w, api.JobSpec{Type: "a", MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 10)
	for range 3 {
		h.submit(api.JobSpec{Type: "b"}) // no worker runs b: they stay pending
	}
	var list api.JobList
	if code := h.do("GET", "/jobs?status=failed", nil, &list); code != http.StatusOK || len(list.Jobs) != 1 || list.Jobs[0].ID != done.ID {
		t.Fatalf("status=failed: HTTP %d, %d jobs", code, len(list.Jobs))
	}
	if list.Total != nil {
		t.Errorf("total %d without count=true", *list.Total)
	}
	list = api.JobList{}
	if code := h.do("GET", "/jobs?status=pending&limit=2&count=true", nil, &list); code != http.StatusOK || len(list.Jobs) != 2 || list.Total == nil || *list.Total != 3 {
		t.Fatalf("status=pending count=true: HTTP %d, %d jobs, total %v", code, len(list.Jobs), list.Total)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/jobs?status=running&state=failed", nil, &e); code != http.StatusBadRequest {
		t.Errorf("status and state together: HTTP %d", code)
	}
	if code := h.do("GET", "/jobs?count=maybe", nil, &e); code != http.StatusBadRequest || e.Error.Field != "count" {
		t.Errorf("count=maybe: HTTP %d %+v", code, e.Error)
	}
}

// rawRequest writes req on a new connection and returns the status line
// and the body of the answer.
func rawRequest(t *testing.T, addr, req string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&body)
	return resp.Status, body.String()
}

// A request with both Content-Length and Transfer-Encoding: chunked (the
// request-smuggling shape of RFC 9112 §6.3) is framed by the chunked
// coding alone and answered, and the connection is closed after the
// answer: bytes after the chunked body, which a front end that trusted
// Content-Length would take for a second request, are never read as one.
func TestContentLengthWithChunkedIsAnsweredThenClosed(t *testing.T) {
	h := newHarness(t, defaultConfig())
	addr := strings.TrimPrefix(h.http.URL, "http://")
	job := `{"type":"a"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(job), job)
	smuggled := "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
		fmt.Sprint(len(`{"type":"smuggled"}`)) + "\r\n\r\n" + `{"type":"smuggled"}`
	req := "POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + smuggled

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !resp.Close {
		t.Fatalf("CL + TE: %s (close %v) %s, want 201 and Connection: close", resp.Status, resp.Close, body)
	}
	if rest, err := io.ReadAll(rd); err != nil || len(rest) != 0 {
		t.Fatalf("after the answer the connection gave %q (%v), want it closed", rest, err)
	}
	var list api.JobList
	h.do("GET", "/jobs", nil, &list)
	if len(list.Jobs) != 1 || list.Jobs[0].Type != "a" {
		t.Fatalf("stored jobs: %+v, want the one of type a", list.Jobs)
	}
}

// A batch larger than the tenant's submit_burst can never pass: it gets
// its own error and no Retry-After, while a batch within the burst waits
// its turn with 429.
func TestBatchLargerThanBurstIsRefusedForGood(t *testing.T) {
	cfg := defaultConfig()
	cfg.Tenants = map[string]config.Tenant{"slow": {SubmitRate: 1, SubmitBurst: 3}}
	h := newHarness(t, cfg)
	batch := func(n int) *http.Response {
		specs := make([]api.JobSpec, n)
		for i := range specs {
			specs[i] = api.JobSpec{Type: "a", Tenant: "slow"}
		}
		b, _ := json.Marshal(api.BatchRequest{Jobs: specs})
		resp, err := http.Post(h.http.URL+"/api/v1/jobs/batch", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := batch(4)
	var e api.ErrorResponse
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || e.Error.Code != api.CodeBatchTooLarge || resp.Header.Get("Retry-After") != "" ||
		!strings.Contains(e.Error.Message, "submit_burst of 3") {
		t.Fatalf("batch of 4 over a burst of 3: HTTP %d %+v Retry-After %q", resp.StatusCode, e.Error, resp.Header.Get("Retry-After"))
	}
	resp = batch(3)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("batch of 3: HTTP %d", resp.StatusCode)
	}
	resp = batch(2)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("batch of 2 with the bucket empty: HTTP %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// Issue 9 item 1: a cursor only reads on the list whose filters made it.
func TestListCursorIsBoundToItsFilters(t *testing.T) {
	cfg := defaultConfig()
	cfg.Server.AcceptUnrunnable = true
	h := newHarness(t, cfg)
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1, Types: []string{"a"}})
	for range 3 {
		h.runOnce(w, api.JobSpec{Type: "a", MaxAttempts: 1}, api.OutcomeFailed, "exit_code", 10)
	}
	for range 3 {
		h.submit(api.JobSpec{Type: "b"})
	}
	var page api.JobList
	if code := h.do("GET", "/jobs?state=failed&limit=2", nil, &page); code != http.StatusOK || page.NextCursor == "" {
		t.Fatalf("first page: HTTP %d, cursor %q", code, page.NextCursor)
	}
	var next api.JobList
	if code := h.do("GET", "/jobs?state=failed&limit=50&cursor="+page.NextCursor, nil, &next); code != http.StatusOK ||
		len(next.Jobs) != 1 || next.Jobs[0].State != api.StateFailed {
		t.Fatalf("same filters, other limit: HTTP %d, %+v", code, next.Jobs)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/jobs?cursor="+page.NextCursor, nil, &e); code != http.StatusBadRequest ||
		e.Error.Code != api.CodeCursorMismatch || e.Error.Field != "cursor" {
		t.Errorf("cursor without its filters: HTTP %d %+v", code, e.Error)
	}
	if code := h.do("GET", "/jobs?state=pending&cursor="+page.NextCursor, nil, &e); code != http.StatusBadRequest || e.Error.Code != api.CodeCursorMismatch {
		t.Errorf("cursor with other filters: HTTP %d %+v", code, e.Error)
	}
	if code := h.do("GET", "/jobs?cursor=bm9wZQ", nil, &e); code != http.StatusBadRequest || e.Error.Code != api.CodeInvalidArgument {
		t.Errorf("a made-up cursor: HTTP %d %+v", code, e.Error)
	}
}

// Seed 002's tags: on jobs and schedules, filterable in lists.
func TestTagsFilterJobsAndSchedules(t *testing.T) {
	h := newHarness(t, defaultConfig())
	tagged := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}, Tags: []string{"nightly", "team:data"}})
	h.submit(api.JobSpec{Type: "a", Command: []string{"true"}, Tags: []string{"adhoc"}})
	var list api.JobList
	if code := h.do("GET", "/jobs?tag=nightly", nil, &list); code != http.StatusOK || len(list.Jobs) != 1 ||
		list.Jobs[0].ID != tagged.ID || !slices.Equal(list.Jobs[0].Tags, []string{"nightly", "team:data"}) {
		t.Fatalf("tag=nightly: HTTP %d %+v", code, list.Jobs)
	}
	var e api.ErrorResponse
	if code := h.do("POST", "/jobs", api.JobSpec{Type: "a", Command: []string{"true"}, Tags: []string{"x", "x"}}, &e); code != http.StatusBadRequest || e.Error.Field != "tags[1]" {
		t.Errorf("a repeated tag: HTTP %d %+v", code, e.Error)
	}
	spec := everyMinute
	spec.Tags = []string{"billing"}
	sc := h.createSchedule(spec)
	h.createSchedule(everyMinute)
	var scs api.ScheduleList
	if code := h.do("GET", "/schedules?tag=billing", nil, &scs); code != http.StatusOK || len(scs.Schedules) != 1 || scs.Schedules[0].ID != sc.ID {
		t.Errorf("schedules tag=billing: HTTP %d %+v", code, scs.Schedules)
	}
}

// Issue 28 item 24: every boolean query parameter takes true, false, 1 or
// 0; anything else is a 400 naming the parameter.
func TestBooleanQueryParametersRefuseOtherValues(t *testing.T) {
	h := newHarness(t, defaultConfig())
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"true"}})
	for _, tc := range []struct{ method, path, param string }{
		{"GET", "/jobs/" + job.ID + "/logs?follow=maybe", "follow"},
		{"POST", "/jobs?wait=yes", "wait"},
		{"GET", "/jobs?count=maybe", "count"},
	} {
		var body any
		if tc.method == "POST" {
			body = api.JobSpec{Type: "a", Command: []string{"true"}}
		}
		var r api.ErrorResponse
		if code := h.do(tc.method, tc.path, body, &r); code != http.StatusBadRequest || r.Error.Code != api.CodeInvalidArgument ||
			r.Error.Field != tc.param || !strings.Contains(r.Error.Message, "true or false") {
			t.Errorf("%s %s: HTTP %d %+v, want 400 invalid_argument naming %s", tc.method, tc.path, code, r.Error, tc.param)
		}
	}
	if code := h.do("GET", "/jobs/"+job.ID+"/logs?follow=false", nil, nil); code != http.StatusOK {
		t.Errorf("follow=false: HTTP %d", code)
	}
}

// Issue 28 item 26: a job's executions page with limit and cursor.
func TestExecutionsPage(t *testing.T) {
	h := newHarness(t, defaultConfig())
	w := h.register(api.RegisterRequest{Name: "w", Slots: 1})
	job := h.submit(api.JobSpec{Type: "a", Command: []string{"false"}, MaxAttempts: 5, Retry: &api.RetryPolicy{Kind: "immediate"}})
	for attempt := 1; attempt <= 5; attempt++ {
		ls := h.lease(w, 1)
		if len(ls) != 1 {
			t.Fatalf("attempt %d: %d leases", attempt, len(ls))
		}
		h.complete(w, api.Completion{JobID: job.ID, Attempt: ls[0].Attempt, Outcome: api.OutcomeFailed, FailureClass: "exit_code"})
	}
	var got []int
	cursor, pages := "", 0
	for {
		var page api.ExecutionList
		path := "/jobs/" + job.ID + "/executions?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		if code := h.do("GET", path, nil, &page); code != http.StatusOK || len(page.Executions) > 2 {
			t.Fatalf("GET %s: HTTP %d, %d executions", path, code, len(page.Executions))
		}
		pages++
		for _, e := range page.Executions {
			got = append(got, e.Attempt)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, []int{1, 2, 3, 4, 5}) || pages != 3 {
		t.Fatalf("attempts over %d pages: %v, want 1..5 over 3", pages, got)
	}
	var e api.ErrorResponse
	if code := h.do("GET", "/jobs/"+job.ID+"/executions?cursor=x", nil, &e); code != http.StatusBadRequest || e.Error.Field != "cursor" {
		t.Errorf("a bad cursor: HTTP %d %+v", code, e.Error)
	}
	if code := h.do("GET", "/jobs/"+job.ID+"/executions?limit=0", nil, &e); code != http.StatusBadRequest || e.Error.Field != "limit" {
		t.Errorf("limit=0: HTTP %d %+v", code, e.Error)
	}
}
