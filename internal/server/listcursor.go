package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// A list cursor handed to clients is the store's cursor, a dot, and a short
// digest of the filters of the list that made it. The store's cursor only
// says where the next page starts; the digest lets the server refuse a
// cursor sent with other filters, which would otherwise read a page of a
// different list from that position. The limit is not part of the digest:
// changing the page size between pages is harmless.
const filterSep = "."

// filterDigest is the digest of a list's filters, in a canonical order.
func filterDigest(lp store.JobListParams) string {
	states := make([]string, 0, len(lp.States))
	for _, s := range lp.States {
		states = append(states, string(s))
	}
	slices.Sort(states)
	states = slices.Compact(states)
	canonical := strings.Join([]string{
		strings.Join(states, ","), sortedSet(lp.Types, lp.Type), sortedSet(lp.Lanes, lp.Lane), lp.Tenant,
		timeKey(lp.CreatedAfter), timeKey(lp.CreatedBefore), lp.Tag, lp.ScheduleID,
	}, "\x00")
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:6])
}

func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// withFilters turns the store's next-page cursor into the one clients see.
func withFilters(storeCursor string, lp store.JobListParams) string {
	if storeCursor == "" {
		return ""
	}
	return storeCursor + filterSep + filterDigest(lp)
}

// openCursor checks a client's cursor against the list's filters and
// returns the store's cursor inside it.
func openCursor(cursor string, lp store.JobListParams) (string, error) {
	if cursor == "" {
		return "", nil
	}
	storeCursor, digest, ok := strings.Cut(cursor, filterSep)
	if !ok || storeCursor == "" || digest == "" {
		return "", badField("cursor", "not a cursor this server returned")
	}
	if digest != filterDigest(lp) {
		e := errf(http.StatusBadRequest, api.CodeCursorMismatch,
			"this cursor belongs to a list with other filters: send the same state, type, lane, tenant, tag, schedule_id and created_after/created_before filters as the request that returned it, or start again without a cursor")
		e.body.Field = "cursor"
		return "", e
	}
	return storeCursor, nil
}

// sortedSet is vals and one, sorted, without duplicates, joined by commas.
func sortedSet(vals []string, one string) string {
	all := slices.Clone(vals)
	if one != "" {
		all = append(all, one)
	}
	slices.Sort(all)
	return strings.Join(slices.Compact(all), ",")
}
