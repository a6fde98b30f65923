package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
)

// errStopping answers a request for a registration once the worker stops.
var errStopping = errors.New("worker: stopping")

// session is one registration: a worker identity and its timings. gen
// numbers the registrations of this process from 1.
type session struct {
	id       string
	gen      uint64
	hbEvery  time.Duration
	leaseTTL time.Duration
}

func (s session) valid() bool { return s.id != "" }

// sessionState is the current registration. When the server forgets the
// worker (404), the registration is dropped and the next request for one
// registers again, once, in the background.
type sessionState struct {
	cur     session
	gen     uint64
	pending chan struct{} // non-nil while a registration is under way
	closed  bool          // stopping: register no more
}

// session returns the current registration, registering again if the last
// one was lost.
func (w *Worker) session(ctx context.Context) (session, error) {
	for {
		w.mu.Lock()
		st := &w.sess
		if st.cur.valid() || st.closed {
			cur, closed := st.cur, st.closed
			w.mu.Unlock()
			if closed && !cur.valid() {
				return cur, errStopping
			}
			return cur, nil
		}
		if st.pending == nil {
			st.pending = make(chan struct{})
			w.bg.Go(w.reregister)
		}
		pending := st.pending
		w.mu.Unlock()
		select {
		case <-pending:
		case <-ctx.Done():
			return session{}, ctx.Err()
		}
	}
}

// currentSession returns the registration without registering.
func (w *Worker) currentSession() session {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sess.cur
}

// reregister registers again after the server forgot the worker.
func (w *Worker) reregister() {
	sess, err := w.register(w.netCtx)
	w.mu.Lock()
	if err == nil {
		w.setSessionLocked(sess)
	} else {
		w.sess.closed = true
	}
	close(w.sess.pending)
	w.sess.pending = nil
	w.mu.Unlock()
	if err != nil && w.netCtx.Err() == nil {
		w.fail(fmt.Errorf("register again: %w", err))
	}
}

func (w *Worker) setSessionLocked(sess session) {
	w.sess.gen++
	sess.gen = w.sess.gen
	w.sess.cur = sess
	w.log.Info("registered", "worker_id", sess.id, "gen", sess.gen,
		"heartbeat_interval", sess.hbEvery, "lease_ttl", sess.leaseTTL)
}

// register asks the server for a new identity, retrying transient
// failures until ctx is done.
func (w *Worker) register(ctx context.Context) (session, error) {
	req := api.RegisterRequest{
		Name: w.opts.Name, Types: w.opts.Types, Handlers: commandFreeTypes(w.opts.Handlers), Labels: w.opts.Labels, Slots: w.opts.Slots,
		CPU: w.opts.CPU, MemoryMB: w.opts.MemoryMB, GPU: w.opts.GPU,
	}
	var resp api.RegisterResponse
	err := w.retry(ctx, "register", func() error {
		return w.call(ctx, func(ctx context.Context) (err error) {
			resp, err = w.client.Register(ctx, req)
			return err
		})
	})
	if err != nil {
		return session{}, err
	}
	if resp.WorkerID == "" {
		return session{}, errors.New("register: the server returned no worker_id")
	}
	return session{
		id:       resp.WorkerID,
		hbEvery:  positiveMS(resp.HeartbeatIntervalMS, 10*time.Second),
		leaseTTL: positiveMS(resp.LeaseTTLMS, 30*time.Second),
	}, nil
}

func positiveMS(ms int64, def time.Duration) time.Duration {
	if ms <= 0 {
		return def
	}
	return time.Duration(ms) * time.Millisecond
}

// sessionLost handles a 404 from the server: the registration gen is gone,
// and with it every attempt held under it, which are stopped and not
// reported. The next request registers again.
func (w *Worker) sessionLost(gen uint64) {
	w.mu.Lock()
	if w.sess.cur.gen != gen || !w.sess.cur.valid() {
		w.mu.Unlock()
		return
	}
	w.log.Warn("the server does not know this worker any more; registering again",
		"worker_id", w.sess.cur.id, "held", len(w.held))
	w.sess.cur = session{}
	var lost []*task
	for _, t := range w.held {
		if t.sess.gen == gen {
			lost = append(lost, t)
		}
	}
	w.mu.Unlock()
	for _, t := range lost {
		t.revoke()
		w.forget(t)
	}
}

// closeSessions stops registering; the current registration stays usable.
func (w *Worker) closeSessions() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sess.closed = true
	w.broadcastLocked()
}
