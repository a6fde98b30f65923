package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
)

func Example() {
	srv := exampleServer() // stands in for a fairway server
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL, client.WithAPIKey(os.Getenv("FAIRWAY_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Submit(ctx, api.JobSpec{Type: "report", Command: []string{"./report.sh", "--day", "2026-11-20"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("submitted", res.Job.ID, res.Job.State)

	job, err := c.Wait(ctx, res.Job.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.ID, job.State)
	// Output:
	// submitted j1 pending
	// j1 succeeded
}

func ExampleClient_FollowLogs() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)

	end, err := c.FollowLogs(context.Background(), "j1", client.LogOptions{}, func(ch api.LogChunk) error {
		fmt.Printf("[%s] %s", ch.Stream, ch.Data)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("job ended:", end.State)
	// Output:
	// [stdout] generating report
	// [stderr] 3 rows skipped
	// job ended: succeeded
}

func ExampleClient_ListAll() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)

	opts := client.ListOptions{States: []string{api.StateFailed}, Limit: 2}
	err := c.ListAll(context.Background(), opts, func(j api.Job) error {
		fmt.Println(j.ID, j.State)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// j9 failed
	// j8 failed
	// j5 failed
}

func ExampleIsNotFound() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)

	_, err := c.Get(context.Background(), "nope")
	switch {
	case client.IsNotFound(err):
		fmt.Println("no such job")
	case client.IsRetryable(err):
		fmt.Println("try again later")
	case err != nil:
		fmt.Println("error:", err)
	}
	// Output:
	// no such job
}

// A worker's life: register, lease, run, report with the lease's attempt
// as fencing token.
func ExampleClient_Lease() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)
	ctx := context.Background()

	reg, err := c.Register(ctx, api.RegisterRequest{Name: "host-1", Types: []string{"report"}, Slots: 1})
	if err != nil {
		log.Fatal(err)
	}
	leases, err := c.Lease(ctx, reg.WorkerID, 1, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range leases {
		fmt.Println("running", l.Job.ID, "attempt", l.Attempt)
		exit := 0
		res, err := c.Complete(ctx, reg.WorkerID, []api.Completion{{
			JobID: l.Job.ID, Attempt: l.Attempt, Outcome: api.OutcomeSucceeded, ExitCode: &exit,
		}})
		if err != nil {
			log.Fatal(err)
		}
		if err := client.ResultError(res[0]); client.IsStaleAttempt(err) {
			fmt.Println("lease lost; result dropped")
		}
	}
	// Output:
	// running j1 attempt 1
}

// exampleServer answers the few calls the examples make, as a fairway
// server would.
func exampleServer() *httptest.Server {
	at := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	job := func(id, state string) api.Job {
		return api.Job{ID: id, Type: "report", Tenant: "default", Lane: "default", Priority: 500, State: state, CreatedAt: at, UpdatedAt: at}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		exampleJSON(w, 201, api.SubmitResponse{Job: job("j1", api.StatePending)})
	})
	mux.HandleFunc("GET /api/v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "j1" {
			exampleJSON(w, 404, api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeNotFound, Message: "no such job"}})
			return
		}
		exampleJSON(w, 200, api.JobResponse{Job: job("j1", api.StateSucceeded)})
	})
	mux.HandleFunc("GET /api/v1/jobs/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Query().Get("attempt") == "" { // Wait reads an empty attempt
			fmt.Fprint(w, "event: log\ndata: {\"job_id\":\"j1\",\"attempt\":1,\"stream\":\"stdout\",\"seq\":1,\"data\":\"generating report\\n\"}\n\n")
			fmt.Fprint(w, "event: log\ndata: {\"job_id\":\"j1\",\"attempt\":1,\"stream\":\"stderr\",\"seq\":2,\"data\":\"3 rows skipped\\n\"}\n\n")
		}
		fmt.Fprint(w, "event: end\ndata: {\"state\":\"succeeded\"}\n\n")
	})
	mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			exampleJSON(w, 200, api.JobList{Jobs: []api.Job{job("j9", "failed"), job("j8", "failed")}, NextCursor: "p2"})
			return
		}
		exampleJSON(w, 200, api.JobList{Jobs: []api.Job{job("j5", "failed")}})
	})
	mux.HandleFunc("POST /api/v1/workers/register", func(w http.ResponseWriter, r *http.Request) {
		exampleJSON(w, 201, api.RegisterResponse{WorkerID: "w1", LeaseTTLMS: 30000, HeartbeatIntervalMS: 10000})
	})
	mux.HandleFunc("POST /api/v1/workers/w1/lease", func(w http.ResponseWriter, r *http.Request) {
		exampleJSON(w, 200, api.LeaseResponse{Leases: []api.Lease{{Job: job("j1", api.StateLeased), Attempt: 1, LeaseExpiresAt: at}}})
	})
	mux.HandleFunc("POST /api/v1/workers/w1/complete", func(w http.ResponseWriter, r *http.Request) {
		exampleJSON(w, 200, api.ItemResults{Results: []api.ItemResult{{JobID: "j1", OK: true}}})
	})
	return httptest.NewServer(mux)
}

func exampleJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
