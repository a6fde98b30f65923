package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// BenchmarkInsertKeyed: a Write of 500 jobs through JobInsertBatched,
// without and with an idempotency key each (the client gives every
// submit one): the keyed path's cost over the unkeyed one.
func BenchmarkInsertKeyed(b *testing.B) {
	const n = 500
	for _, keyed := range []bool{false, true} {
		b.Run(fmt.Sprintf("keyed=%v", keyed), func(b *testing.B) {
			s := openTemp(b)
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				now := time.Now()
				err := s.Write(ctx, func(w store.Writer) error {
					for k := range n {
						j := benchJob(store.NewID(now), now)
						if keyed {
							j.IdempotencyKey = fmt.Sprintf("fwc-%d-%d", i, k)
						}
						if err := w.JobInsertBatched(ctx, j); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, n, "jobs/s")
		})
	}
}
