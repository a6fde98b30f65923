package dispatch

import (
	"context"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Idempotency keys on the deferred path (store doc.go, "Keyed inserts on
// the deferred path"). A keyed job is inserted with JobInsertFreeKey,
// which answers nothing before the commit, once the dispatcher knows its
// key is free; a duplicate is answered here, from what it knows:
//
//   - the keys inserted earlier in the same submit (inBatch);
//   - claiming: the keys its own batches claimed, kept until
//     claimRetention batches after the one that claimed them are durable
//     (a read begun before that batch was durable may not see them);
//   - the committed holders of the submit's keys, read in one query:
//     by the submitting goroutine before it sends the command
//     (prereadHolders), or else by the batch, for all its commands that
//     did not, before their commands run (readHolders), on the
//     dispatcher's goroutine.
//
// The read and claiming together know every claim. A pre-read records
// readAt, the last batch durable (durableSeq, set in settle) when it
// begins: a claim of a batch up to readAt was durable before the read
// began, and the read sees it; a claim of a later batch may be invisible
// to it, and is still in claiming when the command runs if readAt >=
// d.durable - claimRetention (a claim leaves claiming only once its batch
// is claimRetention batches behind the durable one, forgetDurableClaims).
// The batch decides which pre-reads it uses in readHolders, and settle
// never runs between that and its commands. A pre-read is not used, and
// the batch reads that command's keys itself as for a command with none,
// when it failed, when it is older than the retention, or when readAt is
// below claimFloor: the batches started by the last reset, which forgot
// what claiming held; a pre-read is trusted only if every one of them
// was durable, and so visible to it, when it began. The batch's own read
// is made with the durable batch of that moment: a claim is in claiming
// or visible to it. Keeping a durable claim in claiming longer changes no
// answer: it is a committed holder, that a read would return too (its
// job may even have been deleted by retention since: checkKeyOfDeletedJob
// looks at claiming too). A one-job submit to an idle store that claims
// in place (txn.claimInPlace) reads nothing first, as before.
//
// claimRetention is 64 batches (maxInflight). A pre-read's age is the
// batches made durable between its start and its command's batch: those
// of its query, and of its command's wait in the channel (cap maxBatch:
// the next batch or the one after takes it) or to be sent when the
// channel is full. That is a few batches under load; past 64 the batch
// read is the fallback, so the figure costs reads, not answers. claiming
// holds the claims of 64 batches more than before, at most 64 × maxBatch
// submits' keys.
//
// Window: a claim counts for IdempotencyWindow after its job's creation.
// A pre-read answers with the holders inside the window at its start; at
// the command's time a holder it found may have left the window. When
// the command's time is later than the read's, a holder whose id's time
// (store.IDTime, the creation time to the millisecond, later only if the
// clock went back) is within windowEdgeMargin of the command's window
// edge, or unreadable, makes the batch read that command's keys again. A
// claim in claiming is a few seconds old at most (claimRetention batches
// after a durable one, and a batch runs at least each housekeeping tick),
// far inside the window; keptClaim checks its time all the same.
//
// If the view is still wrong (another instance claimed the key
// meanwhile: two leaders, one of them about to be fenced), the claim
// fails the transaction as a missed guard does (store.ErrKeyHeld),
// nothing of the batch is acknowledged, and the dispatcher rebuilds; the
// server answers its requests 503 unavailable, and the client's retry
// finds the holder.

// claimRetention is how many batches after its own is durable a claim
// stays in claiming: a pre-read begun at most this many durable batches
// ago may be trusted.
const claimRetention = maxInflight

// windowEdgeMargin is how close to a command's window edge a pre-read's
// holder, by its id's time, sends the command to the batch read.
const windowEdgeMargin = time.Minute

// preread is the holders of a submit's claims read by the submitting
// goroutine before it sent the command.
type preread struct {
	readAt  uint64    // the last batch durable when the read began
	readNow time.Time // the clock the read's window was taken from
	holders map[store.Claim]string
}

// claimRec is a key claimed by a batch, kept in claiming.
type claimRec struct {
	jobID string
	seq   uint64    // the batch that claimed it
	at    time.Time // its job's creation
}

type loggedClaim struct {
	key idemKey
	seq uint64
}

// claimsOf lists the idempotency keys of jobs.
func claimsOf(jobs []store.Job) []store.Claim {
	var out []store.Claim
	for _, j := range jobs {
		if j.IdempotencyKey != "" {
			out = append(out, store.Claim{Tenant: j.Tenant, Key: j.IdempotencyKey})
		}
	}
	return out
}

// prereadHolders reads, on the submitting goroutine, the committed
// holders of a submit's claims before the command is sent; nil when there
// are none, when the read fails (the batch reads them), or for a one-job
// submit to an idle store that claims in place (txn.claimInPlace: its
// claim answers, with no read at all).
func (d *Dispatcher) prereadHolders(ctx context.Context, claims []store.Claim, oneJob bool) *preread {
	if len(claims) == 0 {
		return nil
	}
	readAt := d.durableSeq.Load()
	if d.claimsInPlace && oneJob && d.startedSeq.Load() == readAt {
		return nil
	}
	now := d.clock.Now()
	holders, err := d.st.IdempotencyHolders(ctx, claims, now.Add(-store.IdempotencyWindow))
	if err != nil {
		d.log.Debug("dispatcher: pre-read of key holders failed; the batch reads them", "err", err)
		return nil
	}
	return &preread{readAt: readAt, readNow: now, holders: holders}
}

// prereadUsable says whether c's pre-read answers for its claims in tx
// (the comment above).
func (d *Dispatcher) prereadUsable(tx *txn, c command) bool {
	if c.pre == nil || c.pre.readAt < d.claimFloor || c.pre.readAt+claimRetention < d.durable {
		return false
	}
	if !tx.now.After(c.pre.readNow) {
		return true
	}
	edge := tx.now.Add(-store.IdempotencyWindow + windowEdgeMargin)
	for _, id := range c.pre.holders {
		if at, ok := store.IDTime(id); !ok || at.Before(edge) {
			return false
		}
	}
	return true
}

// readHolders gathers the committed holders of the keys the batch's
// submits bring: from their pre-reads where usable, and for the others
// in one query. A failed read is left to keyHolders, which reads again
// and fails the submit that needs it.
func (d *Dispatcher) readHolders(tx *txn, batch []command) {
	var claims []store.Claim
	for _, c := range batch {
		if tx.claimInPlace && c.oneJob {
			continue // its claim answers (inPlace)
		}
		if d.prereadUsable(tx, c) {
			tx.noteHolders(c.claims, c.pre.holders)
			continue
		}
		claims = append(claims, c.claims...)
	}
	if len(claims) == 0 {
		return
	}
	holders, err := d.st.IdempotencyHolders(tx.ctx, claims, tx.now.Add(-store.IdempotencyWindow))
	if err != nil {
		return
	}
	tx.noteHolders(claims, holders)
}

// noteHolders records the committed holders of claims, read.
func (t *txn) noteHolders(claims []store.Claim, holders map[store.Claim]string) {
	if t.holders == nil {
		t.holders, t.read = make(map[store.Claim]string, len(claims)), make(map[store.Claim]bool, len(claims))
	}
	for _, c := range claims {
		t.read[c] = true
		if id, ok := holders[c]; ok {
			t.holders[c] = id
		}
	}
}

// inPlace says whether a submit of jobs claims its key in place: with
// JobInsertBatched, whose claim statement finds a held key and names its
// holder, instead of reading the holders before the batch and inserting
// with JobInsertFreeKey. Only a one-job submit, in a batch begun with no
// Write in flight (txn.claimInPlace): a held key is then a duplicate, or
// the key of a job retention deleted (refused; nothing of the submit was
// written, as the claim changed nothing), so the submit's all-or-nothing
// holds without the checks before the inserts; and the Write, made its own
// transaction at once by that insert, waits for nothing queued. On a
// busy store the read is shared by the batch and the Write stays
// deferred (store doc.go, "Keyed inserts on the deferred path").
func inPlace(tx *txn, jobs []store.Job) bool {
	return tx.claimInPlace && len(jobs) == 1 && jobs[0].IdempotencyKey != "" && jobs[0].Unique == nil
}

// heldKey names the job that holds j's key at now, if the dispatcher
// knows one: earlier in the submit, claimed by a batch it keeps (inside
// the window), or committed (holders).
func (d *Dispatcher) heldKey(j store.Job, now time.Time, inBatch map[idemKey]store.Job, holders map[store.Claim]string) (string, bool) {
	k := idemKey{j.Tenant, j.IdempotencyKey}
	if orig, ok := inBatch[k]; ok {
		return orig.ID, true
	}
	if id, ok := d.keptClaim(k, now); ok {
		return id, true
	}
	id, ok := holders[store.Claim{Tenant: j.Tenant, Key: j.IdempotencyKey}]
	return id, ok
}

// keptClaim names the job of k's claim in claiming, if it is inside the
// window at now.
func (d *Dispatcher) keptClaim(k idemKey, now time.Time) (string, bool) {
	c, ok := d.claiming[k]
	if !ok || !c.at.After(now.Add(-store.IdempotencyWindow)) {
		return "", false
	}
	return c.jobID, true
}

// noteClaim remembers that tx's batch claimed j's key.
func (d *Dispatcher) noteClaim(tx *txn, j store.Job) {
	k := idemKey{j.Tenant, j.IdempotencyKey}
	d.claiming[k] = claimRec{jobID: j.ID, seq: tx.seq, at: j.CreatedAt}
	d.claimLog = append(d.claimLog, loggedClaim{key: k, seq: tx.seq})
}

// forgetDurableClaims drops the claims of the batches claimRetention
// behind the durable one: a read, or a pre-read the dispatcher still
// trusts, sees them.
func (d *Dispatcher) forgetDurableClaims() {
	if d.durable < claimRetention {
		return
	}
	upTo := d.durable - claimRetention
	n := 0
	for n < len(d.claimLog) && d.claimLog[n].seq <= upTo {
		k := d.claimLog[n].key
		if c, ok := d.claiming[k]; ok && c.seq <= upTo {
			delete(d.claiming, k)
		}
		n++
	}
	if n > 0 {
		d.claimLog = d.claimLog[n:]
	}
}
