package dispatch

import "sort"

// sortedRecs returns the records by job id, so that what the dispatcher
// does with a set of jobs does not depend on map order.
func sortedRecs(m map[string]*jobRec) []*jobRec {
	out := make([]*jobRec, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].job.ID < out[j].job.ID })
	return out
}

func sortedWorkers(m map[string]*workerRec) []*workerRec {
	out := make([]*workerRec, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].w.ID < out[j].w.ID })
	return out
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
