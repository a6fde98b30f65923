package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/client"
	"github.com/fairwayhq/fairway/worker"
)

type resizeArgs struct {
	Image string `json:"image"`
	Width int    `json:"width"`
}

type resizeResult struct {
	Output string `json:"output"`
}

func resize(ctx context.Context, job worker.Job, in resizeArgs) (any, error) {
	fmt.Fprintf(job.Stdout(), "resizing %s to %dpx\n", in.Image, in.Width)
	return resizeResult{Output: fmt.Sprintf("%s@%d", in.Image, in.Width)}, nil
}

// A typed handler, called directly as a test would.
func ExampleTyped() {
	h := worker.Typed(resize)
	var out bytes.Buffer
	job := worker.NewJob(api.Job{ID: "j1", Type: "resize", Payload: json.RawMessage(`{"image":"cat.png","width":64}`)}, &out, nil)
	res, err := h.Run(context.Background(), job)
	fmt.Print(out.String())
	fmt.Println(string(res), err)
	// Output:
	// resizing cat.png to 64px
	// {"output":"cat.png@64"} <nil>
}

// A Go program as a worker: it runs resize jobs until SIGTERM, then drains.
func ExampleWorker_Run() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.New("http://127.0.0.1:7070", client.WithAPIKey(os.Getenv("FAIRWAY_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(worker.Options{
		Client:   c,
		Slots:    4,
		Handlers: map[string]worker.Handler{"resize": worker.Typed(resize)},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
