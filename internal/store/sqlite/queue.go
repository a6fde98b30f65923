package sqlite

import (
	"github.com/fairwayhq/fairway/internal/store"
)

// Queued writes: see "Queued writes" in doc.go for the design and what
// each guarantee rests on; the recorder and the applier are package
// queued's, shared with PostgreSQL.

// applyQueued is the applier's transaction (queued.Apply): the batch's
// operations in one transaction on the writer connection, the commit
// registered with the syncer, which reports the batch durable after an
// fsync begun after it.
func (s *Store) applyQueued(run func(w store.Writer) error, hasOps bool, durable []chan error) error {
	if !hasOps {
		for _, ch := range durable {
			s.sync.commitTo(false, ch)
		}
		return nil
	}
	s.conn.Lock()
	defer s.conn.Unlock()
	wrote, err := s.transact(bg, run)
	if err != nil {
		return err
	}
	if s.ckpt != nil {
		s.ckpt.notify()
	}
	for i, ch := range durable {
		// One commit: the first Write registers it, the others are
		// durable with it.
		s.sync.commitTo(wrote && i == 0, ch)
	}
	return nil
}
