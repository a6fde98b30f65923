package results

import (
	"context"
	"sync"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// locations
	_ "gocloud.dev/blob/s3blob"   // s3:// locations
)

// buckets keeps the buckets opened so far, by their URL, so that an S3
// client is made once per bucket, not once per upload.
type buckets struct {
	mu   sync.Mutex
	open map[string]*blob.Bucket
}

// maxOpenBuckets bounds the cache; past it a bucket is opened for one
// upload and closed after it.
const maxOpenBuckets = 64

func newBuckets() *buckets { return &buckets{open: map[string]*blob.Bucket{}} }

// get returns the location's bucket and what to call when done with it.
func (bs *buckets) get(ctx context.Context, loc Location) (*blob.Bucket, func(), error) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b := bs.open[loc.bucket]; b != nil {
		return b, func() {}, nil
	}
	b, err := blob.OpenBucket(ctx, loc.bucket)
	if err != nil {
		return nil, nil, err
	}
	if len(bs.open) >= maxOpenBuckets {
		return b, func() { _ = b.Close() }, nil
	}
	bs.open[loc.bucket] = b
	return b, func() {}, nil
}

// closeAll closes the cached buckets; call it once no upload runs.
func (bs *buckets) closeAll() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for k, b := range bs.open {
		_ = b.Close()
		delete(bs.open, k)
	}
}
