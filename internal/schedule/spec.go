package schedule

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	cron "github.com/netresearch/go-cron"
)

// Kind is the form of a spec.
type Kind string

// Spec forms.
const (
	KindCron     Kind = "cron"
	KindInterval Kind = "interval"
	KindOnce     Kind = "once"
)

// Limits on a spec.
const (
	MinInterval = time.Second
	// MaxInterval bounds an interval spec: ten years (of 365 days).
	MaxInterval = 10 * 365 * 24 * time.Hour
	MaxJitter   = 24 * time.Hour
)

// The times a schedule works with: its bounds, its one-time spec and
// every slot it computes lie in [MinTime, MaxTime). The stores keep
// microseconds, but a slot's identity and jitter are nanoseconds since
// 1970 in an int64, which end in 2262; 2200 leaves room for an interval
// added to a time.
var (
	MinTime = time.Unix(0, 0).UTC()
	MaxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// inRange says whether t is a time a schedule can work with.
func inRange(t time.Time) bool {
	return !t.Before(MinTime) && t.Before(MaxTime)
}

// Options are the parts of a schedule that bound or shift its slots.
type Options struct {
	Zone   string    // IANA zone name; "" = UTC
	Start  time.Time // no slot before it (zero: none)
	End    time.Time // no slot after it (zero: none)
	Jitter time.Duration
}

// Spec is a parsed schedule spec: where its slots fall.
type Spec struct {
	text   string
	kind   Kind
	cron   cron.Schedule
	every  time.Duration
	offset time.Duration
	at     time.Time
	loc    *time.Location
	start  time.Time
	end    time.Time
	jitter time.Duration
}

// FieldError is a bad part of a schedule, named as the API names it.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// cronParser reads 5 fields, or 6 with seconds first, and descriptors;
// day-of-month and day-of-week are ORed as in ISC cron.
var cronParser = cron.MustNewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom |
	cron.Month | cron.Dow | cron.Descriptor | cron.DowOrDom)

// Parse reads a spec in one of its three forms (see the package doc).
func Parse(text string, o Options) (*Spec, error) {
	loc, err := zone(o.Zone)
	if err != nil {
		return nil, err
	}
	s := &Spec{text: strings.TrimSpace(text), loc: loc, start: o.Start, end: o.End, jitter: o.Jitter}
	switch {
	case o.Jitter < 0 || o.Jitter > MaxJitter:
		return nil, fieldErr("jitter_ms", "must be between 0 and %d (%s), got %d", MaxJitter.Milliseconds(), MaxJitter, o.Jitter.Milliseconds())
	case !o.Start.IsZero() && !inRange(o.Start):
		return nil, fieldErr("start_at", "must be between %s and %s, got %s", rfc(MinTime), rfc(MaxTime), rfc(o.Start))
	case !o.End.IsZero() && !inRange(o.End):
		return nil, fieldErr("end_at", "must be between %s and %s, got %s", rfc(MinTime), rfc(MaxTime), rfc(o.End))
	case !o.Start.IsZero() && !o.End.IsZero() && !o.End.After(o.Start):
		return nil, fieldErr("end_at", "must be after start_at (%s), got %s", rfc(o.Start), rfc(o.End))
	case s.text == "":
		return nil, fieldErr("spec", `is required: a cron expression ("0 9 * * 1-5"), an interval ("every 15m") or a time ("at 2026-12-01T09:00:00Z")`)
	}
	word, rest, _ := strings.Cut(s.text, " ")
	switch strings.ToLower(word) {
	case "every":
		return s, s.parseInterval(strings.TrimSpace(rest))
	case "at":
		return s, s.parseOnce(strings.TrimSpace(rest))
	case "@every":
		return nil, fieldErr("spec", "write an interval as %q", "every "+strings.TrimSpace(rest))
	}
	return s, s.parseCron()
}

func zone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if strings.HasPrefix(name, "CRON_TZ") || strings.HasPrefix(name, "TZ=") {
		return nil, fieldErr("timezone", "give the zone name alone, e.g. Europe/Berlin")
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fieldErr("timezone", "unknown IANA time zone %q (e.g. UTC, Europe/Berlin, America/New_York)", name)
	}
	return loc, nil
}

func (s *Spec) parseInterval(rest string) error {
	const want = `an interval is "every DURATION" or "every DURATION offset DURATION", e.g. "every 15m offset 5m"`
	everyText, offsetText, hasOffset := strings.Cut(rest, " offset ")
	every, err := time.ParseDuration(strings.TrimSpace(everyText))
	if err != nil {
		return fieldErr("spec", "%s; %q is not a duration", want, everyText)
	}
	if every < MinInterval || every > MaxInterval {
		return fieldErr("spec", "the interval must be between %s and %s (ten years), got %s", MinInterval, MaxInterval, every)
	}
	var offset time.Duration
	if hasOffset {
		if offset, err = time.ParseDuration(strings.TrimSpace(offsetText)); err != nil {
			return fieldErr("spec", "%s; %q is not a duration", want, offsetText)
		}
		if offset < 0 || offset >= every {
			return fieldErr("spec", "the offset must be at least 0 and less than the interval (%s), got %s", every, offset)
		}
	}
	s.kind, s.every, s.offset = KindInterval, every, offset
	return nil
}

func (s *Spec) parseOnce(rest string) error {
	at, err := time.Parse(time.RFC3339, rest)
	if err != nil {
		var wall time.Time
		if wall, err = time.Parse("2006-01-02T15:04:05", rest); err == nil {
			at = instantOf(wall, s.loc)
		}
	}
	if err != nil {
		return fieldErr("spec", `a one-time spec is "at" and an RFC 3339 time, e.g. "at 2026-12-01T09:00:00+01:00" (without an offset it is read in the schedule's zone); got %q`, rest)
	}
	if !inRange(at) {
		return fieldErr("spec", "the time must be between %s and %s, got %s", rfc(MinTime), rfc(MaxTime), rfc(at))
	}
	s.kind, s.at = KindOnce, at
	return nil
}

func (s *Spec) parseCron() error {
	if strings.HasPrefix(s.text, "CRON_TZ=") || strings.HasPrefix(s.text, "TZ=") {
		return fieldErr("spec", "give the zone in the schedule's timezone field, not in the spec")
	}
	sched, err := cronParser.Parse(s.text)
	if err != nil {
		return fieldErr("spec", "not a cron expression (5 fields: minute hour day-of-month month day-of-week, 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly): %v", err)
	}
	s.kind, s.cron = KindCron, sched
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() && s.end.IsZero() {
		return fieldErr("spec", "%q never matches a date", s.text)
	}
	return nil
}

// Kind is the spec's form.
func (s *Spec) Kind() Kind { return s.kind }

// String is the spec as written.
func (s *Spec) String() string { return s.text }

// Location is the zone cron expressions are read in.
func (s *Spec) Location() *time.Location { return s.loc }

// Next returns the first nominal time strictly after after, within the
// start and end bounds; the zero time when there is none.
func (s *Spec) Next(after time.Time) time.Time {
	if !s.start.IsZero() && after.Before(s.start) {
		after = s.start.Add(-time.Nanosecond)
	}
	if after.Before(MinTime) {
		after = MinTime.Add(-time.Nanosecond)
	}
	if !after.Before(MaxTime) {
		return time.Time{}
	}
	var t time.Time
	switch s.kind {
	case KindCron:
		t = s.nextCron(after)
	case KindInterval:
		t = s.nextInterval(after)
	case KindOnce:
		if s.at.After(after) {
			t = s.at
		}
	}
	if t.IsZero() || !t.Before(MaxTime) || (!s.end.IsZero() && t.After(s.end)) {
		return time.Time{}
	}
	return t.In(s.loc)
}

// CheckFires refuses a spec that has no slot after now, so can never
// fire: a one-time spec in the past, an end_at in the past, or bounds
// that hold no slot. The error names the field to change.
func (s *Spec) CheckFires(now time.Time) error {
	if !s.Next(now).IsZero() {
		return nil
	}
	switch {
	case !s.end.IsZero() && !s.end.After(now):
		return fieldErr("end_at", "is in the past (%s, now %s): the schedule would never fire", rfc(s.end), rfc(now))
	case s.kind == KindOnce && !s.at.After(now):
		return fieldErr("spec", "%s is in the past (now %s): the schedule would never fire", rfc(s.at), rfc(now))
	case !s.end.IsZero():
		return fieldErr("end_at", "no slot of %q falls between now (or start_at) and end_at (%s): the schedule would never fire", s.text, rfc(s.end))
	}
	return fieldErr("spec", "%q has no time after now (%s) before %s", s.text, rfc(now), rfc(MaxTime))
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// nextCron walks the expression's wall times in the schedule's zone and
// maps each to an instant as the package doc says: a wall time that
// happens once is that instant; one that happens twice (clocks go back) is
// its first occurrence; one that does not happen (clocks go forward) is
// the first valid instant after the gap. The library walks wall times in
// UTC, where no wall time is skipped or repeated, so no slot of a gap is
// lost to another slot or to a day that starts late.
func (s *Spec) nextCron(after time.Time) time.Time {
	wall := wallClock(after, s.loc)
	for guard := 0; guard < maxWallWalk; guard++ {
		if wall = s.cron.Next(wall); wall.IsZero() {
			return time.Time{}
		}
		if t := instantOf(wall, s.loc); t.After(after) {
			return t
		}
	}
	return time.Time{}
}

// maxWallWalk bounds the wall times tried for one Next: those of a
// repeated hour that map before after (3,600 for a slot every second).
const maxWallWalk = 10_000

// wallClock is t's wall-clock reading in loc, written as a UTC time.
func wallClock(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// zoneProbe is how far around a wall time its zone's offsets are looked
// for: more than the largest UTC offset (14h) plus the largest shift (a
// whole day, as when Samoa skipped 2011-12-30).
const zoneProbe = 40 * time.Hour

// instantOf is the instant of wall (a wall-clock reading in loc, written
// as a UTC time): the instant itself when the reading happens once, its
// first occurrence when it happens twice, and the first valid instant
// after the gap when it does not happen.
func instantOf(wall time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return wall
	}
	lo, hi := math.MaxInt, math.MinInt
	var first time.Time
	for _, probe := range []time.Duration{-zoneProbe, 0, zoneProbe} {
		off := offsetAt(wall.Add(probe).In(loc))
		lo, hi = min(lo, off), max(hi, off)
		t := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if offsetAt(t) == off && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.IsZero() {
		return first
	}
	// A gap: the clock change lies in (wall-hi, wall-lo]; it is the first
	// valid instant after the gap.
	from := wall.Add(-time.Duration(hi) * time.Second).Truncate(time.Second)
	to := wall.Add(-time.Duration(lo) * time.Second).Truncate(time.Second)
	before := offsetAt(from.In(loc))
	for to.Sub(from) > time.Second {
		mid := from.Add(to.Sub(from) / 2).Truncate(time.Second)
		if offsetAt(mid.In(loc)) == before {
			from = mid
		} else {
			to = mid
		}
	}
	return to.In(loc)
}

func offsetAt(t time.Time) int {
	_, off := t.Zone()
	return off
}

// nextInterval is the first offset + k·every after the epoch that is
// strictly after after. after lies in [MinTime, MaxTime), so neither the
// durations nor the time overflow.
func (s *Spec) nextInterval(after time.Time) time.Time {
	since := after.Sub(time.Unix(0, 0)) - s.offset
	k := since / s.every
	if since >= 0 {
		k++
	}
	return time.Unix(0, 0).Add(s.offset + k*s.every).UTC()
}

// Upcoming returns the next n nominal times after after.
func (s *Spec) Upcoming(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for t := s.Next(after); !t.IsZero() && len(out) < n; t = s.Next(t) {
		out = append(out, t)
	}
	return out
}

// JitterFor is the delay of slot nominal of schedule id: deterministic,
// in [0, jitter).
func (s *Spec) JitterFor(id string, nominal time.Time) time.Duration {
	if s.jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", id, nominal.UnixNano())
	return time.Duration(h.Sum64() % uint64(s.jitter))
}
