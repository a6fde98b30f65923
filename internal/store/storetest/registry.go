package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

func testWorkers(t *testing.T, s store.Store) {
	w1 := store.Worker{ID: "w1", Name: "pdf-box", Types: []string{"pdf"}, Handlers: []string{}, Labels: []string{"linux"}, Slots: 4,
		Resources: policy.Resources{MilliCPU: 8000, MemoryMB: 16384, GPU: 0}, State: store.WorkerActive,
		RegisteredAt: T0, LastSeenAt: T0.Add(time.Second)}
	w0 := store.Worker{ID: "w0", Slots: 1, State: store.WorkerDraining, RegisteredAt: T0}
	write(t, s, func(w store.Writer) error {
		if err := w.WorkerUpsert(ctx, w1); err != nil {
			return err
		}
		return w.WorkerUpsert(ctx, w0)
	})
	got, err := s.WorkerGet(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "WorkerGet", w1, got)
	list, err := s.WorkerList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "WorkerList", []store.Worker{w0, w1}, list)
	if len(list) == 2 && (list[0].Handlers != nil || list[1].Handlers == nil) {
		t.Errorf("handlers: not reported must read back nil and none must read back empty; got %#v and %#v",
			list[0].Handlers, list[1].Handlers)
	}

	w1.Slots, w1.State, w1.Types = 8, store.WorkerDraining, []string{"pdf", "xls"}
	write(t, s, func(w store.Writer) error {
		if err := w.WorkerUpsert(ctx, w1); err != nil {
			return err
		}
		if err := w.WorkerTouch(ctx, "w1", T0.Add(time.Minute)); err != nil {
			return err
		}
		wantErr(t, "touch unknown", w.WorkerTouch(ctx, "nope", T0), store.ErrNotFound)
		wantErr(t, "bad state", w.WorkerUpsert(ctx, store.Worker{ID: "x", State: "asleep"}), store.ErrInvalid)
		return w.WorkerDelete(ctx, "w0")
	})
	w1.LastSeenAt = T0.Add(time.Minute)
	list, err = s.WorkerList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after update", []store.Worker{w1}, list)
	write(t, s, func(w store.Writer) error {
		wantErr(t, "delete unknown", w.WorkerDelete(ctx, "w0"), store.ErrNotFound)
		return nil
	})
	_, err = s.WorkerGet(ctx, "w0")
	wantErr(t, "deleted worker", err, store.ErrNotFound)
}

func testSchedules(t *testing.T, s store.Store) {
	mk := func(id, tenant string, enabled bool, next time.Time) store.Schedule {
		return store.Schedule{ID: id, Tenant: tenant, Name: "sched " + id, Spec: "0 * * * *", Timezone: "Europe/Paris",
			Template: json.RawMessage(`{"type":"report","priority":700}`), Overlap: "buffer_one",
			CatchupWindow: 10 * time.Minute, Jitter: 30 * time.Second, StartAt: T0, EndAt: T0.Add(30 * 24 * time.Hour),
			PauseNote: "note " + id, PauseOnFailure: true, Tags: []string{"tag-" + id}, Buffered: []time.Time{next.Add(-2 * time.Hour), next.Add(-time.Hour)},
			Enabled: enabled, NextRunAt: next, LastRunAt: next.Add(-time.Hour), CreatedAt: T0, UpdatedAt: T0}
	}
	a := mk("a", "acme", true, T0.Add(time.Hour))
	b := mk("b", "acme", false, T0)
	c := mk("c", "globex", true, T0.Add(time.Minute))
	c.Spec, c.Template, c.Overlap, c.LastRunAt = "every 5m", nil, "skip", time.Time{}
	c.CatchupWindow, c.Jitter, c.StartAt, c.EndAt, c.PauseNote, c.PauseOnFailure, c.Buffered = 0, 0, time.Time{}, time.Time{}, "", false, nil
	write(t, s, func(w store.Writer) error {
		for _, sc := range []store.Schedule{c, b, a} {
			if err := w.ScheduleUpsert(ctx, sc); err != nil {
				return err
			}
		}
		wantErr(t, "no spec", w.ScheduleUpsert(ctx, store.Schedule{ID: "x", Tenant: "t", CreatedAt: T0}), store.ErrInvalid)
		return nil
	})
	got, err := s.ScheduleGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "ScheduleGet", a, got)

	cases := map[string]struct {
		p    store.ScheduleListParams
		want []store.Schedule
	}{
		"all":     {store.ScheduleListParams{}, []store.Schedule{a, b, c}},
		"tenant":  {store.ScheduleListParams{Tenant: "acme"}, []store.Schedule{a, b}},
		"enabled": {store.ScheduleListParams{EnabledOnly: true}, []store.Schedule{a, c}},
		"due":     {store.ScheduleListParams{DueBefore: T0.Add(30 * time.Minute)}, []store.Schedule{c}},
		"limit":   {store.ScheduleListParams{Limit: 1}, []store.Schedule{a}},
		"after":   {store.ScheduleListParams{AfterID: "a", Limit: 1}, []store.Schedule{b}},
		"tag":     {store.ScheduleListParams{Tag: "tag-b"}, []store.Schedule{b}},
	}
	for name, tc := range cases {
		got, err := s.ScheduleList(ctx, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		diff(t, name, tc.want, got)
	}

	a.Enabled, a.NextRunAt, a.UpdatedAt, a.Buffered = false, T0.Add(2*time.Hour), T0.Add(time.Minute), nil
	write(t, s, func(w store.Writer) error {
		if err := w.ScheduleUpsert(ctx, a); err != nil {
			return err
		}
		if err := w.ScheduleDelete(ctx, "b"); err != nil {
			return err
		}
		wantErr(t, "delete unknown", w.ScheduleDelete(ctx, "b"), store.ErrNotFound)
		return nil
	})
	list, err := s.ScheduleList(ctx, store.ScheduleListParams{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after update", []store.Schedule{a, c}, list)
	_, err = s.ScheduleGet(ctx, "b")
	wantErr(t, "deleted schedule", err, store.ErrNotFound)
}

func testAPIKeys(t *testing.T, s store.Store) {
	k1 := store.APIKey{KeyHash: "sha256:aa", Tenant: "acme", Role: store.RoleTenant, Name: "ci", CreatedAt: T0,
		CreatedBy: "admin", ExpiresAt: T0.Add(time.Hour)}
	k2 := store.APIKey{KeyHash: "sha256:bb", Tenant: "acme", Role: store.RoleAdmin, CreatedAt: T0.Add(time.Second)}
	k3 := store.APIKey{KeyHash: "sha256:cc", Tenant: "globex", Role: store.RoleTenant, CreatedAt: T0}
	k4 := store.APIKey{KeyHash: "sha256:dd", Role: store.RoleWorker, Name: "fleet", CreatedAt: T0}
	write(t, s, func(w store.Writer) error {
		wantErr(t, "tenant key without tenant", w.APIKeyInsert(ctx, store.APIKey{KeyHash: "h", Role: store.RoleTenant, CreatedAt: T0}), store.ErrInvalid)
		for _, k := range []store.APIKey{k3, k2, k1, k4} {
			if err := w.APIKeyInsert(ctx, k); err != nil {
				return err
			}
		}
		wantErr(t, "same hash", w.APIKeyInsert(ctx, k1), store.ErrExists)
		wantErr(t, "bad role", w.APIKeyInsert(ctx, store.APIKey{KeyHash: "h", Tenant: "t", Role: "root", CreatedAt: T0}), store.ErrInvalid)
		return nil
	})
	got, err := s.APIKeyGet(ctx, "sha256:aa")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "APIKeyGet", k1, got)
	list, err := s.APIKeyList(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "tenant keys", []store.APIKey{k1, k2}, list)
	list, err = s.APIKeyList(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "all keys", []store.APIKey{k1, k2, k3, k4}, list)
	if !k1.Expired(T0.Add(time.Hour)) || k1.Expired(T0.Add(time.Hour-time.Microsecond)) || k2.Expired(T0.Add(1000*time.Hour)) {
		t.Errorf("Expired: wrong at the boundary, or for a key that never expires")
	}
	write(t, s, func(w store.Writer) error {
		if err := w.APIKeyDelete(ctx, "sha256:aa"); err != nil {
			return err
		}
		wantErr(t, "delete unknown", w.APIKeyDelete(ctx, "sha256:aa"), store.ErrNotFound)
		return nil
	})
	_, err = s.APIKeyGet(ctx, "sha256:aa")
	wantErr(t, "deleted key", err, store.ErrNotFound)
}

// testLaneStates: a lane's state is stored, replaced, and listed by name.
func testLaneStates(t *testing.T, s store.Store) {
	if got, err := s.LaneStateList(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	batch := store.LaneState{Lane: "batch", Paused: true, Note: "db migration", ChangedAt: T0, ChangedBy: "admin"}
	adhoc := store.LaneState{Lane: "adhoc", Paused: false, ChangedAt: T0, ChangedBy: "tenant:acme"}
	write(t, s, func(w store.Writer) error {
		wantErr(t, "no lane", w.LaneStateSet(ctx, store.LaneState{ChangedAt: T0}), store.ErrInvalid)
		if err := w.LaneStateSet(ctx, batch); err != nil {
			return err
		}
		return w.LaneStateSet(ctx, adhoc)
	})
	got, err := s.LaneStateList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "LaneStateList", []store.LaneState{adhoc, batch}, got)
	batch.Paused, batch.Note, batch.ChangedAt = false, "", T0.Add(time.Hour)
	write(t, s, func(w store.Writer) error { return w.LaneStateSet(ctx, batch) })
	got, err = s.LaneStateList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after resume", []store.LaneState{adhoc, batch}, got)
}

// testWebhooks: webhooks are stored, listed by name, refused twice, deleted.
func testWebhooks(t *testing.T, s store.Store) {
	ops := store.Webhook{Name: "ops", URL: "https://h.example/x", Secret: "0123456789abcdef", Kinds: []string{"job_failed"},
		CreatedAt: T0, CreatedBy: "admin"}
	acme := store.Webhook{Name: "acme", URL: "http://127.0.0.1:9/y", Secret: "fedcba9876543210", Tenants: []string{"acme"}, CreatedAt: T0}
	write(t, s, func(w store.Writer) error {
		if err := w.WebhookInsert(ctx, ops); err != nil {
			return err
		}
		if err := w.WebhookInsert(ctx, acme); err != nil {
			return err
		}
		wantErr(t, "same name", w.WebhookInsert(ctx, ops), store.ErrExists)
		wantErr(t, "no secret", w.WebhookInsert(ctx, store.Webhook{Name: "x", URL: "u", CreatedAt: T0}), store.ErrInvalid)
		return nil
	})
	got, err := s.WebhookList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "WebhookList", []store.Webhook{acme, ops}, got)
	write(t, s, func(w store.Writer) error {
		if err := w.WebhookDelete(ctx, "ops"); err != nil {
			return err
		}
		wantErr(t, "delete unknown", w.WebhookDelete(ctx, "ops"), store.ErrNotFound)
		return nil
	})
	if got, err := s.WebhookList(ctx); err != nil || len(got) != 1 || got[0].Name != "acme" {
		t.Errorf("after delete: %+v %v", got, err)
	}
}
