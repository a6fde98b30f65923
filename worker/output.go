package worker

import (
	"fmt"
	"unicode/utf8"
)

// outputCap keeps a job attempt's output within its limit (api.Job's
// OutputLimitBytes): the first half is shipped as it is written (the
// head), the last half is held in memory (the tail) and shipped when the
// job ends, after a marker naming how many bytes between them were
// dropped. A limit of 0 keeps everything. Guarded by the log shipper's
// mutex.
type outputCap struct {
	limit     int64 // 0: no limit
	headSent  int64 // bytes shipped as the head
	headEnded bool  // the head is full: everything goes to the tail
	tail      []tailSegment
	tailBytes int64
	dropped   int64 // bytes dropped from the front of the tail
}

// tailSegment is one write's bytes of one stream.
type tailSegment struct {
	stream string
	data   []byte
}

func (o *outputCap) headLimit() int64 { return o.limit / 2 }
func (o *outputCap) tailLimit() int64 { return o.limit - o.headLimit() }

// headRoom is how many more bytes the head takes (capped to an int).
func (o *outputCap) headRoom() int {
	if o.limit == 0 {
		return maxJobBuffer
	}
	if o.headEnded {
		return 0
	}
	room := o.headLimit() - o.headSent
	if room <= 0 {
		o.headEnded = true
		return 0
	}
	return int(min(room, maxJobBuffer))
}

// endHead sends the rest of the output to the tail.
func (o *outputCap) endHead() { o.headEnded = true }

// keepTail appends p to the tail and drops from its front what exceeds the
// tail's half of the limit, never leaving a segment that starts inside a
// UTF-8 character.
func (o *outputCap) keepTail(stream string, p []byte) {
	if n := len(o.tail); n > 0 && o.tail[n-1].stream == stream && int64(len(o.tail[n-1].data)) < maxLogChunk {
		o.tail[n-1].data = append(o.tail[n-1].data, p...)
	} else {
		o.tail = append(o.tail, tailSegment{stream: stream, data: append([]byte(nil), p...)})
	}
	o.tailBytes += int64(len(p))
	for o.tailBytes > o.tailLimit() && len(o.tail) > 0 {
		o.dropFront(o.tailBytes - o.tailLimit())
	}
}

// dropFront drops up to excess bytes from the first segment, up to the next
// character start.
func (o *outputCap) dropFront(excess int64) {
	seg := &o.tail[0]
	if int64(len(seg.data)) <= excess {
		o.dropped += int64(len(seg.data))
		o.tailBytes -= int64(len(seg.data))
		o.tail[0] = tailSegment{}
		o.tail = o.tail[1:]
		return
	}
	n := int(excess)
	for n < len(seg.data) && n < int(excess)+utf8.UTFMax && !utf8.RuneStart(seg.data[n]) {
		n++
	}
	o.dropped += int64(n)
	o.tailBytes -= int64(n)
	seg.data = append([]byte(nil), seg.data[n:]...) // let the dropped bytes go
}

// marker is the line that stands in the log for the dropped middle.
func (o *outputCap) marker() string {
	return fmt.Sprintf("\n[fairway: %d bytes of output dropped here: the job's output limit is %d bytes; the first %d and the last %d are kept]\n",
		o.dropped, o.limit, o.headSent, o.tailBytes)
}
