package scheduler

import (
	"context"
	"fmt"
	"log/slog"
)

// Shutdown stops accepting work and waits for every pending and running
// job to finish. If ctx ends first, pending jobs are dropped (they never
// start; their RunSync returns ErrClosed), running jobs have their ctx
// cancelled, and Shutdown waits for them to return before it returns
// ctx.Err() wrapped. Either way the dispatcher has stopped on return.
// Calling it again, or after Close, is harmless.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.markClosed()
	var err error
	select {
	case <-s.drained:
	case <-ctx.Done():
		select {
		case <-s.drained: // drained just as ctx ended: nothing to cancel
		default:
			s.abort()
			err = fmt.Errorf("scheduler: shutdown: %w", ctx.Err())
		}
	}
	s.stop()
	return err
}

// Close stops accepting work, drops pending jobs, cancels the ctx of
// running ones and waits for them to return.
func (s *Scheduler) Close() error {
	s.markClosed()
	s.abort()
	s.stop()
	return nil
}

func (s *Scheduler) markClosed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.changed()
}

// abort drops every pending job and cancels every running one. After it
// the engine holds no pending job, and as submissions are refused the
// dispatcher admits nothing more.
func (s *Scheduler) abort() {
	s.mu.Lock()
	var dropped []*job
	for _, j := range s.jobs {
		if j.running {
			j.cancel()
			continue
		}
		s.dropPending(j)
		dropped = append(dropped, j)
	}
	s.mu.Unlock()
	for _, j := range dropped {
		if j.result != nil {
			j.result <- fmt.Errorf("job %s/%s never started: %w", j.typ, j.key, ErrClosed)
		}
	}
	if len(dropped) > 0 {
		s.log.Warn("scheduler: dropped pending jobs at shutdown", slog.Int("count", len(dropped)))
	}
}

// stop waits for the job goroutines, then stops the dispatcher. It is only
// called once no job can start any more (drained or aborted).
func (s *Scheduler) stop() {
	s.runs.Wait()
	s.quitOnce.Do(func() { close(s.quit) })
	<-s.loopDone
}
