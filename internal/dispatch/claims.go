package dispatch

import (
	"github.com/fairwayhq/fairway/internal/store"
)

// Idempotency keys on the deferred path (store doc.go, "Keyed inserts on
// the deferred path"). A keyed job is inserted with JobInsertFreeKey,
// which answers nothing before the commit, once the dispatcher knows its
// key is free; a duplicate is answered here, from what it knows:
//
//   - the keys inserted earlier in the same submit (inBatch);
//   - claiming: the keys its own batches claimed that may not be durable
//     yet, kept until the batch that claimed them is (a read does not see
//     them before);
//   - the holders of the batch's keys in the store, read in one query per
//     batch (readHolders) before its commands run: every claim committed
//     before, by this dispatcher or another.
//
// A claim leaves claiming only in settle, which never runs between the
// read and the commands of one batch: a claim is either in claiming or
// durable before the read began, and then the read sees it. If the view
// is still wrong (another instance claimed the key meanwhile: two
// leaders, one of them about to be fenced), the claim fails the
// transaction as a missed guard does (store.ErrKeyHeld), nothing of the
// batch is acknowledged, and the dispatcher rebuilds; the server answers
// its requests 503 unavailable, and the client's retry finds the holder.

// claimRec is a key claimed by a batch that may not be durable yet.
type claimRec struct {
	jobID string
	seq   uint64 // the batch that claimed it
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

// readHolders reads the committed holders of the keys the batch's
// submits bring, in one query. A failed read is left to keyHolders,
// which reads again and fails the submit that needs it.
func (d *Dispatcher) readHolders(tx *txn, batch []command) {
	var claims []store.Claim
	for _, c := range batch {
		if tx.claimInPlace && c.oneJob {
			continue // its claim answers (inPlace)
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
	tx.holders, tx.read = holders, make(map[store.Claim]bool, len(claims))
	for _, c := range claims {
		tx.read[c] = true
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

// heldKey names the job that holds j's key, if the dispatcher knows one:
// earlier in the submit, claimed by a batch not yet durable, or committed
// (holders).
func (d *Dispatcher) heldKey(j store.Job, inBatch map[idemKey]store.Job, holders map[store.Claim]string) (string, bool) {
	k := idemKey{j.Tenant, j.IdempotencyKey}
	if orig, ok := inBatch[k]; ok {
		return orig.ID, true
	}
	if c, ok := d.claiming[k]; ok {
		return c.jobID, true
	}
	id, ok := holders[store.Claim{Tenant: j.Tenant, Key: j.IdempotencyKey}]
	return id, ok
}

// noteClaim remembers that tx's batch claimed j's key.
func (d *Dispatcher) noteClaim(tx *txn, j store.Job) {
	k := idemKey{j.Tenant, j.IdempotencyKey}
	d.claiming[k] = claimRec{jobID: j.ID, seq: tx.seq}
	d.claimLog = append(d.claimLog, loggedClaim{key: k, seq: tx.seq})
}

// forgetDurableClaims drops the claims of the batches now durable: the
// store's reads see them from now on.
func (d *Dispatcher) forgetDurableClaims() {
	n := 0
	for n < len(d.claimLog) && d.claimLog[n].seq <= d.durable {
		k := d.claimLog[n].key
		if c, ok := d.claiming[k]; ok && c.seq <= d.durable {
			delete(d.claiming, k)
		}
		n++
	}
	if n > 0 {
		d.claimLog = d.claimLog[n:]
	}
}
