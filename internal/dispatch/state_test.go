package dispatch

import (
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// apply mirrors every field a transition may set into the record: the
// dispatcher lists unfinished jobs from its records (listing.go), and
// builds its next transitions on them (a second uncharged requeue writes
// ReturnedLeases + 1 of the record).
func TestApplyMirrorsEveryField(t *testing.T) {
	var set store.JobSet
	sv := reflect.ValueOf(&set).Elem()
	for i := range sv.NumField() {
		f := sv.Field(i)
		if f.Kind() != reflect.Pointer || sv.Type().Field(i).Name == "HeldAttempt" {
			continue // a held attempt ends the job, whose record leaves the dispatcher
		}
		v := reflect.New(f.Type().Elem())
		switch x := v.Interface().(type) {
		case *store.State:
			*x = store.StateRunning
		case *int:
			*x = 7
		case *int64:
			*x = 11
		case *string:
			*x = "x"
		case *bool:
			*x = true
		case *time.Time:
			*x = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		case *time.Duration:
			*x = time.Minute
		case *store.FailureClass:
			*x = store.FailureClass("timeout")
		case *[]byte:
			*x = []byte("r")
		default:
			t.Fatalf("JobSet.%s: add a value for %T", sv.Type().Field(i).Name, x)
		}
		f.Set(v)
	}
	rec := &jobRec{}
	rec.apply(set, time.Now())
	jv := reflect.ValueOf(rec.job)
	for i := range sv.NumField() {
		name := sv.Type().Field(i).Name
		if sv.Field(i).Kind() != reflect.Pointer || name == "HeldAttempt" {
			continue
		}
		got := jv.FieldByName(name)
		if !got.IsValid() {
			t.Fatalf("JobSet.%s has no Job field of that name", name)
		}
		want := sv.Field(i).Elem()
		if got.Kind() == reflect.Pointer {
			got = got.Elem()
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("apply left Job.%s at %v, want %v", name, got.Interface(), want.Interface())
		}
	}
}
