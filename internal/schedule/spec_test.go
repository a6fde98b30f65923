package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustSpec(t *testing.T, text string, o Options) *Spec {
	t.Helper()
	s, err := Parse(text, o)
	if err != nil {
		t.Fatalf("Parse(%q, %+v): %v", text, o, err)
	}
	return s
}

// upcoming formats the next n times in the spec's zone, as a reader of a
// wall clock there would see them.
func upcoming(s *Spec, from time.Time, n int) string {
	var out []string
	for _, t := range s.Upcoming(from, n) {
		out = append(out, t.Format("2006-01-02 15:04:05 MST"))
	}
	return strings.Join(out, ", ")
}

func TestEverySpecForm(t *testing.T) {
	from := mustTime(t, "2026-12-01T10:07:30Z") // a Tuesday
	cases := []struct {
		spec string
		o    Options
		kind Kind
		want string
	}{
		{"0 9 * * 1-5", Options{}, KindCron,
			"2026-12-02 09:00:00 UTC, 2026-12-03 09:00:00 UTC, 2026-12-04 09:00:00 UTC"},
		{"*/20 * * * * *", Options{}, KindCron, // six fields: seconds first
			"2026-12-01 10:07:40 UTC, 2026-12-01 10:08:00 UTC, 2026-12-01 10:08:20 UTC"},
		{"@hourly", Options{}, KindCron,
			"2026-12-01 11:00:00 UTC, 2026-12-01 12:00:00 UTC, 2026-12-01 13:00:00 UTC"},
		{"@daily", Options{Zone: "Europe/Berlin"}, KindCron,
			"2026-12-02 00:00:00 CET, 2026-12-03 00:00:00 CET, 2026-12-04 00:00:00 CET"},
		{"0 0 1 * 0", Options{}, KindCron, // day 1 OR Sunday, as in ISC cron
			"2026-12-06 00:00:00 UTC, 2026-12-13 00:00:00 UTC, 2026-12-20 00:00:00 UTC"},
		{"0 9 * * *", Options{Zone: "America/New_York"}, KindCron,
			"2026-12-01 09:00:00 EST, 2026-12-02 09:00:00 EST, 2026-12-03 09:00:00 EST"},
		{"every 15m", Options{}, KindInterval,
			"2026-12-01 10:15:00 UTC, 2026-12-01 10:30:00 UTC, 2026-12-01 10:45:00 UTC"},
		{"every 15m offset 5m", Options{}, KindInterval,
			"2026-12-01 10:20:00 UTC, 2026-12-01 10:35:00 UTC, 2026-12-01 10:50:00 UTC"},
		{"every 1h30m", Options{Zone: "Asia/Kolkata"}, KindInterval, // epoch-aligned, shown in the zone
			"2026-12-01 16:00:00 IST, 2026-12-01 17:30:00 IST, 2026-12-01 19:00:00 IST"},
		{"at 2026-12-01T12:00:00+01:00", Options{}, KindOnce, "2026-12-01 11:00:00 UTC"},
		{"at 2026-12-01T12:00:00", Options{Zone: "Europe/Berlin"}, KindOnce, "2026-12-01 12:00:00 CET"},
		{"at 2026-12-01T10:00:00Z", Options{}, KindOnce, ""}, // already past
		{"every 10m", Options{Start: mustTime(t, "2026-12-01T11:00:00Z"), End: mustTime(t, "2026-12-01T11:20:00Z")}, KindInterval,
			"2026-12-01 11:00:00 UTC, 2026-12-01 11:10:00 UTC, 2026-12-01 11:20:00 UTC"},
	}
	for _, c := range cases {
		s := mustSpec(t, c.spec, c.o)
		if s.Kind() != c.kind {
			t.Errorf("%q: kind %s, want %s", c.spec, s.Kind(), c.kind)
		}
		if got := upcoming(s, from, 3); got != c.want {
			t.Errorf("%q %+v from %s:\n got %s\nwant %s", c.spec, c.o, from, got, c.want)
		}
	}
}

func TestBadSpecsNameTheField(t *testing.T) {
	cases := []struct {
		spec  string
		o     Options
		field string
		msg   string
	}{
		{"", Options{}, "spec", "is required"},
		{"61 * * * *", Options{}, "spec", "not a cron expression"},
		{"0 0 30 2 *", Options{}, "spec", "never matches"},
		{"@every 5m", Options{}, "spec", `"every 5m"`},
		{"every soon", Options{}, "spec", "is not a duration"},
		{"every 500ms", Options{}, "spec", "between 1s and"},
		{"every 10m offset 10m", Options{}, "spec", "less than the interval"},
		{"at tomorrow", Options{}, "spec", "RFC 3339"},
		{"CRON_TZ=UTC 0 9 * * *", Options{}, "spec", "timezone field"},
		{"0 9 * * *", Options{Zone: "Mars/Olympus"}, "timezone", "unknown IANA time zone"},
		{"0 9 * * *", Options{Zone: "Local"}, "timezone", "unknown IANA time zone"},
		{"0 9 * * *", Options{Jitter: -time.Second}, "jitter_ms", "between 0"},
		{"0 9 * * *", Options{Start: mustTime(t, "2026-12-02T00:00:00Z"), End: mustTime(t, "2026-12-01T00:00:00Z")}, "end_at", "after start_at"},
		// Issue 28 item 33: bounds on intervals and on every time.
		{"every 1000000h", Options{}, "spec", "between 1s and 87600h"},
		{"every 87601h", Options{}, "spec", "between 1s and 87600h"},
		{"at 2300-01-01T00:00:00Z", Options{}, "spec", "between 1970-01-01T00:00:00Z and 2200-01-01T00:00:00Z"},
		{"at 1969-12-31T23:59:59Z", Options{}, "spec", "between 1970"},
		{"0 9 * * *", Options{Start: mustTime(t, "2300-01-01T00:00:00Z")}, "start_at", "between 1970"},
		{"0 9 * * *", Options{End: mustTime(t, "9999-01-01T00:00:00Z")}, "end_at", "between 1970"},
	}
	for _, c := range cases {
		_, err := Parse(c.spec, c.o)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) {
			t.Errorf("Parse(%q, %+v) = %v; want field %s saying %q", c.spec, c.o, err, c.field, c.msg)
		}
	}
}

// Daylight saving in two zones, both transitions: a slot in the
// spring-forward gap runs once at the end of the gap; a wall time that
// happens twice runs once, at its first occurrence.
func TestDaylightSavingTransitions(t *testing.T) {
	cases := []struct {
		zone, spec, from, want string
	}{
		// New York, 2026-03-08: 02:00 EST → 03:00 EDT.
		{"America/New_York", "30 2 * * *", "2026-03-06T12:00:00Z",
			"2026-03-07 02:30:00 EST, 2026-03-08 03:00:00 EDT, 2026-03-09 02:30:00 EDT"},
		{"America/New_York", "*/30 * * * *", "2026-03-08T06:00:00Z",
			"2026-03-08 01:30:00 EST, 2026-03-08 03:00:00 EDT, 2026-03-08 03:30:00 EDT"},
		// New York, 2026-11-01: 02:00 EDT → 01:00 EST; 01:xx happens twice.
		{"America/New_York", "30 1 * * *", "2026-10-30T12:00:00Z",
			"2026-10-31 01:30:00 EDT, 2026-11-01 01:30:00 EDT, 2026-11-02 01:30:00 EST"},
		{"America/New_York", "0 * * * *", "2026-11-01T03:30:00Z",
			"2026-11-01 00:00:00 EDT, 2026-11-01 01:00:00 EDT, 2026-11-01 02:00:00 EST"},
		// Berlin, 2026-03-29: 02:00 CET → 03:00 CEST.
		{"Europe/Berlin", "30 2 * * *", "2026-03-27T12:00:00Z",
			"2026-03-28 02:30:00 CET, 2026-03-29 03:00:00 CEST, 2026-03-30 02:30:00 CEST"},
		// Berlin, 2026-10-25: 03:00 CEST → 02:00 CET; 02:xx happens twice.
		{"Europe/Berlin", "30 2 * * *", "2026-10-23T12:00:00Z",
			"2026-10-24 02:30:00 CEST, 2026-10-25 02:30:00 CEST, 2026-10-26 02:30:00 CET"},
		{"Europe/Berlin", "15,45 2 * * *", "2026-10-24T22:00:00Z",
			"2026-10-25 02:15:00 CEST, 2026-10-25 02:45:00 CEST, 2026-10-26 02:15:00 CET"},
	}
	for _, c := range cases {
		s := mustSpec(t, c.spec, Options{Zone: c.zone})
		if got := upcoming(s, mustTime(t, c.from), 3); got != c.want {
			t.Errorf("%s %q:\n got %s\nwant %s", c.zone, c.spec, got, c.want)
		}
	}
}

func TestJitterIsDeterministicAndBounded(t *testing.T) {
	s := mustSpec(t, "every 1m", Options{Jitter: 30 * time.Second})
	t0 := mustTime(t, "2026-12-01T00:00:00Z")
	var lo, hi time.Duration = time.Hour, 0
	for i := range 2000 {
		slot := t0.Add(time.Duration(i) * time.Minute)
		j := s.JitterFor("sch-1", slot)
		if j < 0 || j >= 30*time.Second {
			t.Fatalf("jitter %s out of [0, 30s)", j)
		}
		if j != s.JitterFor("sch-1", slot) {
			t.Fatalf("jitter of one slot changed")
		}
		lo, hi = min(lo, j), max(hi, j)
	}
	if lo > 2*time.Second || hi < 28*time.Second {
		t.Errorf("2000 slots' jitter spans only [%s, %s] of [0, 30s)", lo, hi)
	}
	if j := mustSpec(t, "every 1m", Options{}).JitterFor("sch-1", t0); j != 0 {
		t.Errorf("no jitter configured, got %s", j)
	}
}

// Issue 28, items 30-32: the slots of a spring-forward gap, as
// docs/schedules.md promises them ("a slot whose wall time does not exist
// runs once, at the first valid instant after the gap"), in the zones and
// on the dates where they were lost: a gap slot whose moved time matched
// another slot (New York), a gap at midnight (Santiago), and a one-time
// spec inside a gap. Each case is checked by a backfill over the day (the
// slots as UTC instants) and by upcoming (as wall times there).
func TestSpringForwardGapSlots(t *testing.T) {
	cases := []struct {
		name, zone, spec string
		backfillFrom, to string
		wantBackfill     string // UTC instants, allow_all
		upcomingFrom     string
		wantUpcoming     string // wall times in the zone
	}{
		{"NY gap slot shares its hour with a real slot", "America/New_York", "30 2,3 * * *",
			"2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z",
			"2026-03-08T07:00:00Z 2026-03-08T07:30:00Z",
			"2027-03-13T12:00:00Z",
			"2027-03-14 03:00:00 EDT, 2027-03-14 03:30:00 EDT, 2027-03-15 02:30:00 EDT"},
		{"NY gap slot with the hour after", "America/New_York", "30 2,3 * * *",
			"2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z",
			"2026-03-07T07:30:00Z 2026-03-07T08:30:00Z",
			"2027-03-13T06:00:00Z",
			"2027-03-13 02:30:00 EST, 2027-03-13 03:30:00 EST, 2027-03-14 03:00:00 EDT"},
		{"Santiago midnight gap", "America/Santiago", "0 0 * * *",
			"2026-09-04T12:00:00Z", "2026-09-07T12:00:00Z",
			"2026-09-05T04:00:00Z 2026-09-06T04:00:00Z 2026-09-07T03:00:00Z",
			"2027-09-03T12:00:00Z",
			"2027-09-04 00:00:00 -04, 2027-09-05 01:00:00 -03, 2027-09-06 00:00:00 -03"},
		{"Santiago hourly across the gap", "America/Santiago", "0 * * * *",
			"2026-09-06T02:30:00Z", "2026-09-06T05:30:00Z",
			"2026-09-06T03:00:00Z 2026-09-06T04:00:00Z 2026-09-06T05:00:00Z",
			"2026-09-06T02:30:00Z",
			"2026-09-05 23:00:00 -04, 2026-09-06 01:00:00 -03, 2026-09-06 02:00:00 -03"},
		{"Berlin gap slot shares its hour with a real slot", "Europe/Berlin", "30 2,3 * * *",
			"2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z",
			"2026-03-29T01:00:00Z 2026-03-29T01:30:00Z",
			"2026-03-28T12:00:00Z",
			"2026-03-29 03:00:00 CEST, 2026-03-29 03:30:00 CEST, 2026-03-30 02:30:00 CEST"},
		{"NY one time inside the gap", "America/New_York", "at 2027-03-14T02:30:00",
			"2027-03-14T00:00:00Z", "2027-03-15T00:00:00Z",
			"2027-03-14T07:00:00Z",
			"2027-03-13T00:00:00Z",
			"2027-03-14 03:00:00 EDT"},
		{"NY one time in the repeated hour: first occurrence", "America/New_York", "at 2026-11-01T01:30:00",
			"2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z",
			"2026-11-01T05:30:00Z",
			"2026-10-31T00:00:00Z",
			"2026-11-01 01:30:00 EDT"},
		{"Apia skipped a whole day (2011-12-30)", "Pacific/Apia", "0 12 * * *",
			"2011-12-29T00:00:00Z", "2011-12-31T00:00:00Z",
			"2011-12-29T22:00:00Z 2011-12-30T10:00:00Z 2011-12-30T22:00:00Z",
			"2011-12-29T00:00:00Z",
			"2011-12-29 12:00:00 -10, 2011-12-31 00:00:00 +14, 2011-12-31 12:00:00 +14"},
		{"Santiago one time at the missing midnight", "America/Santiago", "at 2026-09-06T00:00:00",
			"2026-09-06T00:00:00Z", "2026-09-07T00:00:00Z",
			"2026-09-06T04:00:00Z",
			"2026-09-01T00:00:00Z",
			"2026-09-06 01:00:00 -03"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustSpec(t, c.spec, Options{Zone: c.zone})
			a, err := Backfill(s, OverlapAllowAll, State{}, mustTime(t, c.backfillFrom), mustTime(t, c.to))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range a.Fire {
				got = append(got, f.UTC().Format(time.RFC3339))
			}
			if g := strings.Join(got, " "); g != c.wantBackfill {
				t.Errorf("backfill %s..%s:\n got %s\nwant %s", c.backfillFrom, c.to, g, c.wantBackfill)
			}
			if g := upcoming(s, mustTime(t, c.upcomingFrom), 3); g != c.wantUpcoming {
				t.Errorf("upcoming from %s:\n got %s\nwant %s", c.upcomingFrom, g, c.wantUpcoming)
			}
		})
	}
}

// Issue 28 item 33: the longest interval walks up to MaxTime and stops;
// its times only grow (no overflow into the past).
func TestComputedTimesStayInRange(t *testing.T) {
	for _, text := range []string{"every 87600h", "every 87600h offset 87599h", "every 1s", "0 0 29 2 *", "@yearly"} {
		s := mustSpec(t, text, Options{Zone: "America/New_York"})
		prev := mustTime(t, "2026-11-26T00:00:00Z")
		var n int
		for next := s.Next(prev); !next.IsZero() && n < 500; next = s.Next(prev) {
			if !next.After(prev) || !next.Before(MaxTime) {
				t.Fatalf("%q: after %s came %s (MaxTime %s)", text, prev, next, MaxTime)
			}
			prev, n = next, n+1
			if n == 3 && text == "every 1s" {
				prev = MaxTime.Add(-2 * time.Second)
			}
		}
		if n == 500 && text != "every 1s" {
			t.Errorf("%q: more than 500 slots before %s", text, MaxTime)
		}
	}
	s := mustSpec(t, "every 87600h", Options{})
	for _, from := range []string{"2199-12-31T00:00:00Z", "2262-04-11T00:00:00Z", "9999-01-01T00:00:00Z"} {
		if got := s.Next(mustTime(t, from)); !got.IsZero() {
			t.Errorf("Next(%s) = %s, want none past %s", from, got, MaxTime)
		}
	}
	if got := s.Next(mustTime(t, "1900-01-01T00:00:00Z")); !got.Equal(MinTime) {
		t.Errorf("Next(1900) = %s, want the first slot, at the epoch", got)
	}
	if _, err := Backfill(s, OverlapAllowAll, State{}, mustTime(t, "2026-01-01T00:00:00Z"), mustTime(t, "9999-01-01T00:00:00Z")); err == nil {
		t.Errorf("a backfill to 9999 was accepted")
	}
}

// Issue 28 item 34: a spec that can never fire is refused, naming the
// field to change.
func TestCheckFiresRefusesSchedulesThatNeverFire(t *testing.T) {
	now := mustTime(t, "2026-11-26T09:00:00Z")
	cases := []struct {
		spec  string
		o     Options
		field string // "" = accepted
		msg   string
	}{
		{"at 2026-11-26T08:00:00Z", Options{}, "spec", "in the past"},
		{"at 2026-11-26T09:00:00Z", Options{}, "spec", "in the past"},
		{"at 2026-11-26T10:00:00Z", Options{}, "", ""},
		{"every 1m", Options{End: mustTime(t, "2026-11-26T08:00:00Z")}, "end_at", "in the past"},
		{"0 3 * * *", Options{Start: mustTime(t, "2026-12-01T04:00:00Z"), End: mustTime(t, "2026-12-01T05:00:00Z")}, "end_at", "no slot"},
		{"every 1m", Options{End: mustTime(t, "2026-11-26T10:00:00Z")}, "", ""},
		{"0 9 * * *", Options{Start: mustTime(t, "2027-01-01T00:00:00Z")}, "", ""},
	}
	for _, c := range cases {
		err := mustSpec(t, c.spec, c.o).CheckFires(now)
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%q %+v: refused: %v", c.spec, c.o, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Msg, c.msg)):
			t.Errorf("%q %+v: got %v; want field %s saying %q", c.spec, c.o, err, c.field, c.msg)
		}
	}
}
