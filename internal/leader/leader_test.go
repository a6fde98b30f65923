package leader

import (
	"context"
	"database/sql"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store/postgres"
)

var ctx = context.Background()

// testDB opens a pool on a fresh, migrated schema of the test database.
func testDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	url := pgtest.URL(t)
	if _, err := postgres.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	return pgtest.Open(t, url), url
}

func lease(name string, ttl time.Duration) Lease {
	return Lease{Holder: name, Address: name + ":7070", TTL: ttl}
}

// elect has name campaign on the free row and returns its term.
func elect(t *testing.T, db *sql.DB, name string, ttl time.Duration) Term {
	t.Helper()
	term, ok, err := lease(name, ttl).Campaign(ctx, db)
	if err != nil || !ok {
		t.Fatalf("%s's campaign: %v %v", name, ok, err)
	}
	return term
}

// beginTx begins a transaction, rolled back at the end of the test
// unless committed.
func beginTx(t *testing.T, db *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func TestOneLeaderAtATime(t *testing.T) {
	db, _ := testDB(t)
	a, b := lease("a", time.Minute), lease("b", time.Minute)
	ta, ok, err := a.Campaign(ctx, db)
	if err != nil || !ok || ta.Number != 1 {
		t.Fatalf("a's campaign on a free row: %+v %v %v", ta, ok, err)
	}
	if _, ok, err := b.Campaign(ctx, db); ok || err != nil {
		t.Fatalf("b won while a leads (%v)", err)
	}
	if ok, err := ta.Renew(ctx, db); !ok || err != nil {
		t.Fatalf("a's renewal: %v %v", ok, err)
	}
	cur, err := Read(ctx, db)
	if err != nil || cur.Holder != "a" || cur.Address != "a:7070" || cur.Term != 1 || !cur.Live {
		t.Fatalf("row: %+v %v", cur, err)
	}
	if err := ta.Resign(ctx, db); err != nil {
		t.Fatal(err)
	}
	tb, ok, err := b.Campaign(ctx, db)
	if err != nil || !ok || tb.Number != 2 {
		t.Fatalf("b's campaign after a resigned: %+v %v %v", tb, ok, err)
	}
	if ok, err := ta.Renew(ctx, db); ok || err != nil {
		t.Errorf("a renewed a term that is over (%v)", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := ta.Fence(ctx, tx); !errors.Is(err, ErrDeposed) {
		t.Errorf("a's fence after b took over: %v, want ErrDeposed", err)
	}
}

// A transaction fenced under a term holds off the next term until it
// ends, even when the lease runs out meanwhile; afterwards the old term
// commits nothing.
func TestAFencedTransactionHoldsOffTheNextTerm(t *testing.T) {
	db, _ := testDB(t)
	ta := elect(t, db, "a", 300*time.Millisecond)
	tx := beginTx(t, db)
	if err := ta.Fence(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE written_by_a (x int)"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // a's lease runs out while its transaction is open
	campaignWaitsForCommit(t, db, tx)
	tx2, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	if err := ta.Fence(ctx, tx2); !errors.Is(err, ErrDeposed) {
		t.Errorf("a's fence under b's term: %v", err)
	}
}

// Two transactions fenced under the same term, on two connections, run
// at once, and the term's renewal waits for neither: only a new term
// (a campaign) waits for fenced transactions.
func TestFencedTransactionsAndRenewalsDoNotWaitForEachOther(t *testing.T) {
	db, _ := testDB(t)
	ta := elect(t, db, "a", time.Minute)
	quick, cancel := context.WithTimeout(ctx, 5*time.Second) // a wait fails the test, not hangs it
	defer cancel()
	var open []*sql.Tx
	for slot := range 2 {
		tx := beginTx(t, db)
		if _, err := tx.ExecContext(quick, FenceSQL, append(ta.FenceArgs(), slot)...); err != nil {
			t.Fatalf("fence on slot %d while another fenced transaction is open: %v", slot, err)
		}
		open = append(open, tx)
	}
	if ok, err := ta.Renew(quick, db); !ok || err != nil {
		t.Fatalf("renewal with two fenced transactions open: %v %v", ok, err)
	}
	for _, tx := range open {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	terms, err := Terms(ctx, db)
	if err != nil || len(terms) != 1 || terms[0].Commits != 2 {
		t.Fatalf("terms %+v (%v), want term 1 with its 2 commits", terms, err)
	}
}

// waitForLockWaiter waits until a campaign (an UPDATE of leadership)
// waits on a lock: the row's, or the fence's advisory lock.
func waitForLockWaiter(t *testing.T, db *sql.DB) {
	t.Helper()
	waitForWaiter(t, db, "UPDATE leadership%")
}

// waitForWaiter waits until a session whose statement is LIKE query
// waits on a lock.
func waitForWaiter(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE $1`, query).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no statement like %q waited on a lock", query)
}

// Two electors: one leads; when it stops gracefully the other takes over
// at once; when it dies without resigning (its connections gone) the other
// takes over once the lease has run out.
func TestElectorsFailOver(t *testing.T) {
	db, url := testDB(t)
	const ttl = 600 * time.Millisecond
	var leading atomic.Value // the holder leading now
	leading.Store("")
	run := func(name string, pool *sql.DB) (stop func()) {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		e := &Elector{DB: pool, Lease: lease(name, ttl)}
		go func() {
			defer close(done)
			e.Run(rctx, func(lctx context.Context, term Term) {
				leading.Store(name)
				<-lctx.Done()
				leading.CompareAndSwap(name, "")
			})
		}()
		return func() { cancel(); <-done }
	}
	waitLeader := func(name string, within time.Duration) time.Duration {
		start := time.Now()
		for time.Since(start) < within {
			if leading.Load() == name {
				return time.Since(start)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("%s did not lead within %s (leading: %q)", name, within, leading.Load())
		return 0
	}
	stopA := run("a", db)
	waitLeader("a", 5*time.Second)
	poolB := pgtest.Open(t, url)
	stopB := run("b", poolB)
	defer stopB()
	time.Sleep(2 * ttl)
	if leading.Load() != "a" {
		t.Fatalf("leadership moved while a renewed: %q", leading.Load())
	}
	stopA() // graceful: a resigns
	t.Logf("after a resigned, b led in %s", waitLeader("b", 2*time.Second))

	poolC, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	stopC := run("c", poolC)
	defer stopC()
	stopB() // b resigns; c takes over
	waitLeader("c", 2*time.Second)
	poolC.Close() // c dies without resigning: its renewals fail
	cur, err := Read(ctx, db)
	if err != nil || cur.Holder != "c" {
		t.Fatalf("row before the takeover: %+v %v", cur, err)
	}
	stopA = run("a", db)
	defer stopA()
	t.Logf("after c died, a led in %s", waitLeader("a", 5*time.Second))
}

// A leader of the release before migration 0008 fences with two
// arguments; during a rollout its transactions still commit, counted
// under slot 0.
func TestThePreviousReleasesFenceStillCommits(t *testing.T) {
	db, _ := testDB(t)
	ta := elect(t, db, "a", time.Minute)
	tx := beginTx(t, db)
	if _, err := tx.ExecContext(ctx, `SELECT fairway_fence($1, $2)`, ta.FenceArgs()...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if terms, err := Terms(ctx, db); err != nil || len(terms) != 1 || terms[0].Commits != 1 {
		t.Fatalf("terms %+v (%v)", terms, err)
	}
}

// silentDB is a DB whose statements stop being answered once silent is
// set, whatever their context says (a driver stuck on a partitioned
// network), until healed.
type silentDB struct {
	DB
	silent atomic.Bool
	healed chan struct{}
}

func (s *silentDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if s.silent.Load() {
		<-s.healed
		return nil, errors.New("healed")
	}
	return s.DB.ExecContext(ctx, q, args...)
}

// A leader whose renewals go unanswered stops leading while its lease is
// still live in the database: before any other instance could take over.
func TestALeaderCutOffStepsDownBeforeItsLeaseRunsOut(t *testing.T) {
	db, _ := testDB(t)
	sdb := &silentDB{DB: db, healed: make(chan struct{})}
	defer close(sdb.healed)
	e := &Elector{DB: sdb, Lease: lease("a", time.Second)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stepped := make(chan Current, 1)
	go e.Run(ctx, func(tctx context.Context, term Term) {
		sdb.silent.Store(true)
		<-tctx.Done()
		cur, err := Read(context.Background(), db)
		if err != nil {
			t.Error(err)
		}
		stepped <- cur
		cancel()
	})
	select {
	case cur := <-stepped:
		if !cur.Live || cur.Holder != "a" {
			t.Errorf("at the step-down the lease row is %+v: it ran out first", cur)
		}
		t.Logf("stepped down with %s of the lease left", time.Until(cur.ExpiresAt))
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off leader still leads after 30 s")
	}
}

// A transaction that fences while a campaign waits for the term's
// fenced transactions waits behind the campaign and, once it has
// committed, fails: its check sees the new term (the fence checks in a
// statement after its lock was granted, not with a snapshot from
// before).
func TestAFenceBehindACampaignFailsOnceTheTermChanged(t *testing.T) {
	db, _ := testDB(t)
	ta := elect(t, db, "a", 300*time.Millisecond)
	first := beginTx(t, db)
	if err := ta.Fence(ctx, first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // a's lease runs out while first is open
	won := blockedCampaign(t, db)
	late := beginTx(t, db)
	fenced := make(chan error, 1)
	go func() { fenced <- ta.Fence(ctx, late) }()
	waitForWaiter(t, db, "SELECT fairway_fence%") // queued behind the campaign
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if tb := <-won; tb.Number != 2 {
		t.Fatalf("b's term %d, want 2", tb.Number)
	}
	if err := <-fenced; !errors.Is(err, ErrDeposed) {
		t.Fatalf("a's fence queued behind b's campaign: %v, want ErrDeposed", err)
	}
}

// A REPEATABLE READ transaction, whose snapshot may predate the fence's
// lock, holds off the next term by the row lock instead.
func TestARepeatableReadFenceHoldsOffTheNextTerm(t *testing.T) {
	db, _ := testDB(t)
	ta := elect(t, db, "a", 300*time.Millisecond)
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := ta.Fence(ctx, tx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // a's lease runs out while its transaction is open
	campaignWaitsForCommit(t, db, tx)
}

// The fence's lock is the database's, but its key holds the leadership
// table's OID: a fenced transaction in one schema holds off no campaign
// in another.
func TestAFenceHoldsOffNoCampaignInAnotherSchema(t *testing.T) {
	db, _ := testDB(t)
	other, _ := testDB(t)
	ta := elect(t, db, "a", time.Minute)
	tx := beginTx(t, db)
	if err := ta.Fence(ctx, tx); err != nil {
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, ok, err := lease("o", time.Minute).Campaign(quick, other); !ok || err != nil {
		t.Fatalf("a campaign in another schema while a fenced transaction is open: %v %v", ok, err)
	}
}

// campaignWaitsForCommit runs b's campaign while tx, fenced by a's
// expired term 1, is open, and checks that b's term 2 begins only once
// tx has committed.
func campaignWaitsForCommit(t *testing.T, db *sql.DB, tx *sql.Tx) {
	t.Helper()
	won := blockedCampaign(t, db)
	select {
	case <-won:
		t.Fatal("b's term began while a's fenced transaction was open")
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if tb := <-won; tb.Number != 2 {
		t.Fatalf("b's term %d, want 2", tb.Number)
	}
}

// blockedCampaign starts b's campaign and returns once it waits for a
// lock; its term arrives on the channel when it wins.
func blockedCampaign(t *testing.T, db *sql.DB) <-chan Term {
	t.Helper()
	won := make(chan Term, 1)
	go func() {
		tb, ok, err := lease("b", time.Minute).Campaign(ctx, db)
		if err != nil || !ok {
			t.Errorf("b's campaign: %v %v", ok, err)
		}
		won <- tb
	}()
	waitForLockWaiter(t, db)
	return won
}
