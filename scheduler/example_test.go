package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fairwayhq/fairway/scheduler"
)

// Application-level names: the scheduler package knows nothing of git.
const (
	JobTypeSyncClone scheduler.JobType       = "sync-clone"
	JobTypeRepack    scheduler.JobType       = "repack"
	JobTypeSnapshot  scheduler.JobType       = "snapshot"
	ConflictGroupGit scheduler.ConflictGroup = "git"
)

func ExampleScheduler_RegisterType() {
	s, err := scheduler.New(scheduler.Options{MaxConcurrency: 50})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	// Foreground clones: dispatched first, at most 40 at once (the tier),
	// never alongside another git job on the same repository.
	err = s.RegisterType(JobTypeSyncClone, scheduler.JobTypeConfig{
		DefaultCost:    10,
		MaxConcurrency: 50,
		ConflictGroup:  ConflictGroupGit,
		Priority:       scheduler.PriorityForeground,
	})
	fmt.Println("sync-clone:", err)
	// Background repacks: at most 3 at once, 10 for the whole tier.
	err = s.RegisterType(JobTypeRepack, scheduler.JobTypeConfig{
		DefaultCost:    20,
		MaxConcurrency: 3,
		ConflictGroup:  ConflictGroupGit,
		Priority:       scheduler.PriorityBackground,
	})
	fmt.Println("repack:", err)
	// A priority is also a cap, so it must be at least 1.
	err = s.RegisterType(JobTypeSnapshot, scheduler.JobTypeConfig{DefaultCost: 5})
	fmt.Println("snapshot:", errors.Is(err, scheduler.ErrInvalidType))

	cost, learned := s.EstimatedCost(JobTypeRepack, "github.com/torvalds/linux")
	fmt.Println("first repack costs", cost, "learned:", learned)
	// Output:
	// sync-clone: <nil>
	// repack: <nil>
	// snapshot: true
	// first repack costs 20 learned: false
}

func ExampleScheduler_RunSync() {
	s, err := scheduler.New(scheduler.Options{MaxConcurrency: 8})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	if err := s.RegisterType(JobTypeSyncClone, scheduler.JobTypeConfig{
		DefaultCost: 10, MaxConcurrency: 8, ConflictGroup: ConflictGroupGit, Priority: scheduler.PriorityForeground,
	}); err != nil {
		panic(err)
	}

	// In an HTTP handler: the fairness key is the client, so one client's
	// burst of clones cannot starve the others.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = s.RunSync(ctx, JobTypeSyncClone, "github.com/torvalds/linux", "10.0.0.7",
		func(ctx context.Context) error {
			fmt.Println("cloning github.com/torvalds/linux")
			return nil
		})
	fmt.Println("clone:", err)
	fmt.Println("charged to 10.0.0.7:", s.AccumulatedCost("10.0.0.7"))

	err = s.RunSync(ctx, "unregistered", "x", "10.0.0.7", func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, scheduler.ErrUnknownType))
	// Output:
	// cloning github.com/torvalds/linux
	// clone: <nil>
	// charged to 10.0.0.7: 10
	// true
}

func ExampleScheduler_Submit() {
	// One slot: background jobs of one fairness key run in arrival order.
	s, err := scheduler.New(scheduler.Options{MaxConcurrency: 1})
	if err != nil {
		panic(err)
	}
	if err := s.RegisterType(JobTypeRepack, scheduler.JobTypeConfig{
		DefaultCost: 20, MaxConcurrency: 3, ConflictGroup: ConflictGroupGit, Priority: scheduler.PriorityBackground,
	}); err != nil {
		panic(err)
	}

	var mu sync.Mutex
	var done []string
	for _, repo := range []string{"git.git", "linux.git", "go.git"} {
		s.Submit(JobTypeRepack, repo, func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			done = append(done, "repacked "+repo)
			return nil
		})
	}

	// Shutdown refuses new work and waits for the queued jobs to finish.
	if err := s.Shutdown(context.Background()); err != nil {
		panic(err)
	}
	for _, line := range done {
		fmt.Println(line)
	}
	err = s.SubmitErr(JobTypeRepack, "late.git", func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, scheduler.ErrClosed))
	// Output:
	// repacked git.git
	// repacked linux.git
	// repacked go.git
	// true
}
