package store

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
)

func TestNewIDSortsByTime(t *testing.T) {
	var g IDGenerator
	t0 := time.Date(2025, 11, 3, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5000 {
		// Many ids per millisecond, and a clock that steps back once.
		at := t0.Add(time.Duration(i/100) * time.Millisecond)
		if i == 2500 {
			at = t0
		}
		ids = append(ids, g.New(at))
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatal("ids from one generator are not increasing")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if len(id) != 26 || strings.Trim(id, crockford) != "" || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	got, ok := IDTime(ids[0])
	if !ok || !got.Equal(t0) {
		t.Fatalf("IDTime = %v, %v; want %v", got, ok, t0)
	}
	if a, b := g.New(t0.Add(time.Hour)), g.New(t0.Add(2*time.Hour)); a >= b {
		t.Fatalf("later id %s sorts before %s", b, a)
	}
	if _, ok := IDTime("not-an-id"); ok {
		t.Fatal("IDTime accepted garbage")
	}
}

func TestIDIncrementOverflow(t *testing.T) {
	var g IDGenerator
	t0 := time.UnixMilli(1000)
	g.New(t0)
	g.last = [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	a := g.New(t0)
	if at, _ := IDTime(a); !at.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("overflow should borrow the next millisecond, got %v", at)
	}
}

func TestJobCursor(t *testing.T) {
	c := JobCursor{CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 678901000, time.UTC), ID: "01JD:with:colons"}
	got, err := DecodeJobCursor(c.Encode())
	if err != nil || !got.CreatedAt.Equal(c.CreatedAt) || got.ID != c.ID {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "!!", "eDox", JobCursor{}.Encode()} {
		if _, err := DecodeJobCursor(bad); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("DecodeJobCursor(%q) = %v, want ErrInvalidCursor", bad, err)
		}
	}
}

func TestStates(t *testing.T) {
	if len(UnfinishedStates())+len(TerminalStates()) != len(AllStates()) {
		t.Fatal("states do not partition")
	}
	for _, s := range AllStates() {
		if !s.Valid() {
			t.Errorf("%s not valid", s)
		}
	}
	for _, s := range TerminalStates() {
		if !s.Terminal() {
			t.Errorf("%s not terminal", s)
		}
	}
	if State("zombie").Valid() {
		t.Error("unknown state valid")
	}
}

func TestPolicyJob(t *testing.T) {
	j := Job{ID: "a", Type: "x", Tenant: "t", Priority: 7, Resources: policy.Resources{GPU: 1},
		DependsOn: []Dependency{{JobID: "b", Condition: CondFailure}, {JobID: "c", Condition: CondAny}}}
	pj := j.PolicyJob()
	if pj.ID != "a" || pj.Priority != 7 || pj.Resources.GPU != 1 || len(pj.DependsOn) != 2 ||
		pj.DependsOn[0].Condition != policy.AfterFailure || pj.DependsOn[1].Condition != policy.AfterAny {
		t.Fatalf("PolicyJob = %+v", pj)
	}
}

func TestDuplicateError(t *testing.T) {
	var err error = &DuplicateError{Tenant: "t", Key: "k", JobID: "j"}
	if !errors.Is(err, ErrDuplicate) || errors.Is(err, ErrConflict) {
		t.Fatal("DuplicateError must match ErrDuplicate only")
	}
	if !strings.Contains(err.Error(), "j") {
		t.Fatal(err.Error())
	}
}
