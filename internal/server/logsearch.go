package server

import (
	"bytes"
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// Log search (GET /jobs/{id}/logs?q=TEXT): the job's output is read in
// order, one page at a time, and reassembled into lines per attempt and
// stream (a line may span chunks); each line that contains TEXT (bytes,
// case-sensitive) is answered as a chunk of its own: the line and its
// newline, with the attempt, stream and the seq and time of the chunk the
// line ended in. The other filters (attempt, stream) apply as for a plain
// read. At most maxMatches lines are answered.
const maxMatches = 10000

// lineKey is one attempt's stream: its lines are assembled apart.
type lineKey struct {
	attempt int
	stream  store.Stream
}

func (s *Server) searchLogs(ctx context.Context, w http.ResponseWriter, lp store.LogListParams, q string) error {
	needle := []byte(q)
	partial := map[lineKey][]byte{}
	out := api.LogList{Chunks: []api.LogChunk{}}
	match := func(c store.LogChunk, line []byte) bool {
		if bytes.Contains(line, needle) {
			m := c
			m.Data = append(append([]byte(nil), line...), '\n')
			out.Chunks = append(out.Chunks, apiChunk(m))
		}
		return len(out.Chunks) < maxMatches
	}
	lp.Limit = store.MaxLogLimit
	for {
		page, err := s.st.LogList(ctx, lp)
		if err != nil {
			return err
		}
		for _, c := range page {
			k := lineKey{c.Attempt, c.Stream}
			data := append(partial[k], c.Data...)
			for {
				nl := bytes.IndexByte(data, '\n')
				if nl < 0 {
					break
				}
				if !match(c, data[:nl]) {
					writeJSON(w, http.StatusOK, out)
					return nil
				}
				data = data[nl+1:]
			}
			partial[k] = append([]byte(nil), data...)
			lp.AfterAttempt, lp.AfterSeq = c.Attempt, c.Seq
		}
		if len(page) < lp.Limit {
			break
		}
		if lp.Attempt > 0 {
			lp.AfterAttempt = 0
		}
	}
	for _, k := range sortedLineKeys(partial) { // a last line without its newline
		if line := partial[k]; len(line) > 0 {
			match(store.LogChunk{JobID: lp.JobID, Attempt: k.attempt, Stream: k.stream}, line)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func sortedLineKeys(m map[lineKey][]byte) []lineKey {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b lineKey) int {
		if a.attempt != b.attempt {
			return a.attempt - b.attempt
		}
		return strings.Compare(string(a.stream), string(b.stream))
	})
	return keys
}
