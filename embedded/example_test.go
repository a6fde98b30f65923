package embedded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/embedded"
	"github.com/fairwayhq/fairway/worker"
)

type greetArgs struct {
	Name string `json:"name"`
}

func greet(ctx context.Context, job worker.Job, in greetArgs) (any, error) {
	return map[string]string{"greeting": "hello, " + in.Name}, nil
}

// A Go program that keeps its queue in a SQLite data directory and runs
// its handlers in process: no server, no HTTP.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fairway-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	fw, err := embedded.Open(ctx, embedded.Options{Store: dir}) // or a postgres:// URL
	if err != nil {
		log.Fatal(err)
	}
	w, err := fw.NewWorker(worker.Options{
		Slots:    4,
		Handlers: map[string]worker.Handler{"greet": worker.Typed(greet)},
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = w.Run(ctx) }()

	sub, err := fw.Submit(ctx, api.JobSpec{Type: "greet", Payload: json.RawMessage(`{"name":"fairway"}`)})
	if err != nil {
		log.Fatal(err)
	}
	job, err := fw.Client().Wait(ctx, sub.Job.ID) // the whole API, in process
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.State, string(job.Result))
	if err := fw.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// succeeded {"greeting":"hello, fairway"}
}
