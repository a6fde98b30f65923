package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fairwayhq/fairway/api"
)

func TestLogsPage(t *testing.T) {
	want := api.LogList{Chunks: []api.LogChunk{chunk(4, "stderr", "oops\n")}}
	c, f := newFake(t, reply(200, want))
	got, err := c.Logs(context.Background(), "j1", LogOptions{Stream: "stderr", AfterAttempt: 2, AfterSeq: 3, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	wantReq(t, f.last(t), "GET", "/api/v1/jobs/j1/logs", url.Values{
		"after_attempt": {"2"}, "stream": {"stderr"}, "after_seq": {"3"}, "limit": {"50"}})
}

func collect(got *[]api.LogChunk) func(api.LogChunk) error {
	return func(ch api.LogChunk) error {
		*got = append(*got, ch)
		return nil
	}
}

func TestFollowLogs(t *testing.T) {
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.raw(": keep-alive\n\nretry: 1000\n\n")
		s.event("log", chunk(1, "stdout", "hello\n"))
		s.raw("event: log\r\ndata: {\"job_id\":\"j1\",\"attempt\":1,\r\ndata: \"stream\":\"stderr\",\"seq\":2,\"data\":\"warn\"}\r\n\r\n")
		s.event("something-new", map[string]int{"x": 1})
		s.event("end", api.LogEnd{State: api.StateSucceeded})
		s.event("log", chunk(3, "stdout", "after the end: ignored\n"))
	})
	var got []api.LogChunk
	end, err := c.FollowLogs(context.Background(), "j1", LogOptions{Stream: "stdout", Limit: 5}, collect(&got))
	if err != nil {
		t.Fatal(err)
	}
	if end.State != api.StateSucceeded {
		t.Errorf("end %+v", end)
	}
	want := []api.LogChunk{chunk(1, "stdout", "hello\n"), {JobID: "j1", Attempt: 1, Stream: "stderr", Seq: 2, Data: "warn"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got)\n%s", diff)
	}
	wantReq(t, f.last(t), "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}, "stream": {"stdout"}})
}

func attemptChunk(attempt int, seq int64, data string) api.LogChunk {
	ch := chunk(seq, "stdout", data)
	ch.Attempt = attempt
	return ch
}

// A stream that ends without its end event is reopened after the last chunk
// seen; chunks sent again (a server that ignores after_attempt resends
// everything) are not delivered twice.
func TestFollowLogsReconnects(t *testing.T) {
	var n atomic.Int32
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		switch n.Add(1) {
		case 1:
			s.event("log", attemptChunk(1, 0, "a"))
			s.event("log", attemptChunk(1, 1, "b"))
			s.event("log", attemptChunk(2, 0, "c"))
			// the handler returns: the stream ends without "end"
		case 2:
			for i, d := range []string{"a", "b"} {
				s.event("log", attemptChunk(1, int64(i), d))
			}
			s.event("log", attemptChunk(2, 0, "c"))
			s.event("log", attemptChunk(2, 1, "d"))
			s.event("end", api.LogEnd{State: api.StateFailed})
		}
	})
	var got []api.LogChunk
	end, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(&got))
	if err != nil || end.State != api.StateFailed {
		t.Fatalf("end %+v, err %v", end, err)
	}
	var data []string
	for _, ch := range got {
		data = append(data, ch.Data)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, data); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	reqs := f.all()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	wantReq(t, reqs[0], "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}})
	wantReq(t, reqs[1], "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}, "after_attempt": {"2"}, "after_seq": {"0"}})
}

// With an attempt filter the position is the seq alone.
func TestFollowLogsOneAttemptReconnects(t *testing.T) {
	var n atomic.Int32
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		if n.Add(1) == 1 {
			s.event("log", attemptChunk(3, 7, "a"))
			return
		}
		s.event("log", attemptChunk(3, 8, "b"))
		s.event("end", api.LogEnd{State: api.StateSucceeded})
	})
	var got []api.LogChunk
	if _, err := c.FollowLogs(context.Background(), "j1", LogOptions{Attempt: 3, AfterSeq: 6}, collect(&got)); err != nil || len(got) != 2 {
		t.Fatalf("err %v, %d chunks", err, len(got))
	}
	reqs := f.all()
	wantReq(t, reqs[0], "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}, "attempt": {"3"}, "after_seq": {"6"}})
	wantReq(t, reqs[1], "GET", "/api/v1/jobs/j1/logs", url.Values{"follow": {"true"}, "attempt": {"3"}, "after_seq": {"7"}})
}

func TestFollowLogsReconnectRefused(t *testing.T) {
	var n atomic.Int32
	c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			startSSE(w).event("log", chunk(1, "stdout", "a"))
			return
		}
		apiError(404, api.CodeNotFound, "job deleted")(w, r)
	})
	var got []api.LogChunk
	_, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(&got))
	if !IsNotFound(err) || len(got) != 1 {
		t.Errorf("err %v after %d chunks", err, len(got))
	}
}

func TestFollowLogsFirstConnectionNotRetried(t *testing.T) {
	var n atomic.Int32
	c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		apiError(503, api.CodeOverloaded, "busy")(w, r)
	})
	_, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(new([]api.LogChunk)))
	if !IsRetryable(err) || n.Load() != 1 {
		t.Errorf("err %v after %d requests", err, n.Load())
	}
	if !strings.HasPrefix(err.Error(), "follow logs of job j1: overloaded (503)") {
		t.Errorf("message %q", err)
	}
}

func TestFollowLogsCallbackError(t *testing.T) {
	c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w)
		s.event("log", chunk(1, "stdout", "a"))
		s.event("log", chunk(2, "stdout", "b"))
		s.event("end", api.LogEnd{State: api.StateSucceeded})
	})
	stop := errors.New("enough")
	calls := 0
	_, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, func(api.LogChunk) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("err %v (want the callback's error as is), calls %d", err, calls)
	}
}

func TestFollowLogsContextCancel(t *testing.T) {
	c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w).event("log", chunk(1, "stdout", "a"))
		<-r.Context().Done() // the job never ends
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := c.FollowLogs(ctx, "j1", LogOptions{}, func(api.LogChunk) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestFollowLogsWithoutEventStream(t *testing.T) {
	c, _ := newFake(t, reply(200, api.LogList{}))
	_, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(new([]api.LogChunk)))
	if !errors.Is(err, ErrNoEventStream) {
		t.Errorf("err %v", err)
	}
}

func TestFollowLogsBadEvent(t *testing.T) {
	c, _ := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w).raw("event: log\ndata: {not json\n\n")
	})
	_, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(new([]api.LogChunk)))
	if err == nil || IsRetryable(err) || !strings.Contains(err.Error(), "decode log event") {
		t.Errorf("err %v", err)
	}
}

func TestReadEvents(t *testing.T) {
	in := "event: a\ndata:x\ndata: y\nid: 4\n\n:comment\n\ndata\n\nevent: b\n\nevent:c\ndata:  two spaces\n\ndata: tail-without-blank-line"
	type ev struct{ Name, Data string }
	var got []ev
	err := readEvents(strings.NewReader(in), func(e sseEvent) error {
		got = append(got, ev{e.name, string(e.data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{{"a", "x\ny"}, {"message", ""}, {"c", " two spaces"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestLogsAllReadsEachAttempt(t *testing.T) {
	pages := map[string][]api.LogChunk{ // attempt/after_seq
		"1/":  {attemptChunk(1, 1, "a"), attemptChunk(1, 2, "b")},
		"1/1": {attemptChunk(1, 2, "b")},
		"2/":  {attemptChunk(2, 1, "c")},
	}
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/jobs/j1" {
			j := job("j1", api.StateFailed)
			j.Attempt = 2
			writeJSON(w, 200, api.JobResponse{Job: j})
			return
		}
		q := r.URL.Query()
		writeJSON(w, 200, api.LogList{Chunks: pages[q.Get("attempt")+"/"+q.Get("after_seq")]})
	})
	read := func(opts LogOptions) []string {
		var data []string
		err := c.LogsAll(context.Background(), "j1", opts, func(ch api.LogChunk) error {
			data = append(data, ch.Data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, read(LogOptions{Stream: "stdout"})); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	var got []string
	for _, r := range f.all() {
		got = append(got, r.Path+"?"+url.Values(r.Query).Encode())
	}
	want := []string{
		"/api/v1/jobs/j1?",
		"/api/v1/jobs/j1/logs?attempt=1&stream=stdout",
		"/api/v1/jobs/j1/logs?after_seq=2&attempt=1&stream=stdout",
		"/api/v1/jobs/j1/logs?attempt=2&stream=stdout",
		"/api/v1/jobs/j1/logs?after_seq=1&attempt=2&stream=stdout",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c"}, read(LogOptions{AfterAttempt: 1, AfterSeq: 1})); diff != "" {
		t.Errorf("resumed (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c"}, read(LogOptions{Attempt: 2})); diff != "" {
		t.Errorf("one attempt (-want +got)\n%s", diff)
	}
}

// A failed reconnection is retried after a back-off; a chunk brought by the
// stream resets the count.
func TestFollowLogsRetriesFailedReconnection(t *testing.T) {
	var n atomic.Int32
	c, f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			startSSE(w).event("log", chunk(1, "stdout", "a"))
		case 2:
			apiError(503, api.CodeOverloaded, "restarting")(w, r)
		default:
			s := startSSE(w)
			s.event("log", chunk(2, "stdout", "b"))
			s.event("end", api.LogEnd{State: api.StateSucceeded})
		}
	})
	var got []api.LogChunk
	end, err := c.FollowLogs(context.Background(), "j1", LogOptions{}, collect(&got))
	if err != nil || end.State != api.StateSucceeded || len(got) != 2 || len(f.all()) != 3 {
		t.Errorf("end %+v, err %v, %d chunks, %d requests", end, err, len(got), len(f.all()))
	}
}
