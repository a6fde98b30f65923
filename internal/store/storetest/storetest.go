// Package storetest is the conformance suite every store driver runs:
//
//	func TestConformance(t *testing.T) {
//		storetest.Exercise(t, func(t *testing.T) store.Store { ... })
//	}
//
// It uses only the store.Store interface, so the same tests hold SQLite and
// PostgreSQL to the same contract: field round trips, idempotency under
// concurrency, fencing, per-operation outcomes inside one transaction,
// pagination under concurrent inserts, summaries.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fairwayhq/fairway/internal/store"
)

// Exercise runs the suite. open must return a new, empty, migrated store on
// each call and arrange for it to be closed with t.Cleanup (Close must be
// safe to call twice: one test closes early).
func Exercise(t *testing.T, open func(t *testing.T) store.Store) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

var tests = []testCase{
	{"JobRoundTrip", testJobRoundTrip},
	{"JobRoundTripMinimal", testJobRoundTripMinimal},
	{"InsertShapes", testInsertShapes},
	{"ExecutionUpsertShapes", testExecutionUpsertShapes},
	{"JobTimePrecision", testJobTimePrecision},
	{"JobAsStored", testJobAsStored},
	{"JobInsertExists", testJobInsertExists},
	{"JobInsertInvalid", testJobInsertInvalid},
	{"JobGetNotFound", testJobGetNotFound},
	{"JobGetMany", testJobGetMany},
	{"JobListUnfinished", testJobListUnfinished},
	{"JobDeleteFinished", testJobDeleteFinished},
	{"JobDeleteFinishedTakesTheSpec", testJobDeleteFinishedTakesTheSpec},
	{"EventDeleteBefore", testEventDeleteBefore},
	{"EventActorFilter", testEventActorFilter},
	{"AttemptEvents", testAttemptEvents},
	{"SubmittedEvents", testSubmittedEvents},
	{"RetentionOfRowlessEvents", testRetentionOfRowlessEvents},
	{"HeldAttempts", testHeldAttempts},
	{"LateStartEvents", testLateStartEvents},
	{"SubmitTokens", testSubmitTokens},

	{"IdempotencyDuplicateWithinWindow", testIdempotencyDuplicate},
	{"IdempotencyOtherTenant", testIdempotencyOtherTenant},
	{"IdempotencyExpiredKeyReusable", testIdempotencyExpired},
	{"IdempotencyLookupWindow", testIdempotencyLookupWindow},
	{"IdempotencySameBatch", testIdempotencySameBatch},
	{"IdempotencyConcurrent", testIdempotencyConcurrent},
	{"IdempotencyPurge", testIdempotencyPurge},
	{"KeyedBatchedSameWrite", testKeyedBatchedSameWrite},
	{"KeyedBatchedExpiredClaim", testKeyedBatchedExpiredClaim},
	{"KeyedTakenIDLeavesKeyFree", testKeyedTakenIDLeavesKeyFree},
	{"KeyedBatchedIDOfHeldJob", testKeyedBatchedIDOfHeldJob},
	{"KeyedBatchedConcurrent", testKeyedBatchedConcurrent},
	{"IdempotencyHolders", testIdempotencyHolders},
	{"FreeKeyInsert", testFreeKeyInsert},
	{"FreeKeyHeldFailsWrite", testFreeKeyHeldFailsWrite},
	{"FreeKeyConcurrent", testFreeKeyConcurrent},

	{"UniqueRoundTrip", testUniqueRoundTrip},
	{"UniqueDuplicate", testUniqueDuplicate},
	{"UniqueReleasedByState", testUniqueReleasedByState},
	{"UniquePeriod", testUniquePeriod},
	{"UniqueDeletedHolder", testUniqueDeletedHolder},
	{"UniqueSameBatch", testUniqueSameBatch},
	{"UniqueDuplicateKeepsKeyFree", testUniqueDuplicateKeepsKeyFree},
	{"UniquePayload", testUniquePayload},
	{"UniqueConcurrent", testUniqueConcurrent},
	{"UniqueInvalid", testUniqueInvalid},
	{"Snoozes", testSnoozes},

	{"TransitionFenced", testTransitionFenced},
	{"TransitionBatched", testTransitionBatched},
	{"InsertBatched", testInsertBatched},
	{"InsertLeasedInOneWrite", testInsertLeasedInOneWrite},
	{"InterleavedOperationsKeepTheirOrder", testInterleavedOperationsKeepTheirOrder},
	{"TransitionSetsEveryField", testTransitionSetsEveryField},
	{"TransitionClears", testTransitionClears},
	{"TransitionNotFound", testTransitionNotFound},
	{"TransitionInvalid", testTransitionInvalid},
	{"TransitionBatchWithMissCommitsRest", testTransitionBatchWithMiss},
	{"ExecutionUpsertMany", testExecutionUpsertMany},

	{"WriteRollbackOnError", testWriteRollback},
	{"WritePanicRollsBack", testWritePanic},
	{"WriteOperationsAreAtomic", testWriteOpsAtomic},
	{"WriterUnusableAfterWrite", testWriterAfterWrite},
	{"WriteManyOperations", testWriteMany},
	{"ReadsDoNotWaitForWriter", testReadsDuringWrite},
	{"Close", testClose},

	{"QueuedWriteIsRead", testQueuedWriteIsRead},
	{"QueuedAndDirectKeepOrder", testQueuedAndDirectKeepOrder},
	{"QueuedGuardMissRefusesWrites", testQueuedGuardMissRefusesWrites},

	{"ListFilters", testListFilters},
	{"ListPagination", testListPagination},
	{"ListPaginationTies", testListPaginationTies},
	{"ListPaginationConcurrentInserts", testListPaginationConcurrent},
	{"ListBadCursor", testListBadCursor},
	{"ListLimitClamp", testListLimitClamp},

	{"Executions", testExecutions},
	{"ExecutionListFilters", testExecutionListFilters},
	{"ExecutionResults", testExecutionResults},
	{"Summary", testSummary},
	{"Series", testSeries},
	{"SummaryEmpty", testSummaryEmpty},
	{"Usage", testUsage},

	{"Logs", testLogs},
	{"LogsAtomicAppend", testLogsAtomic},
	{"Events", testEvents},

	{"Workers", testWorkers},
	{"Schedules", testSchedules},
	{"APIKeys", testAPIKeys},
	{"LaneStates", testLaneStates},
	{"Webhooks", testWebhooks},
}

// T0 is the suite's clock origin: every time in the suite is T0 plus
// something, with microsecond precision.
var T0 = time.Date(2025, 11, 3, 10, 0, 0, 0, time.UTC)

var errBoom = errors.New("boom")

// cmpOpts compares JSON semantically (a driver may store jsonb) and lets
// empty and nil collections match.
var cmpOpts = []cmp.Option{
	cmp.FilterPath(func(p cmp.Path) bool { return !isRawJSON(p) }, cmpopts.EquateEmpty()),
	cmp.FilterPath(isRawJSON, cmp.Comparer(func(a, b json.RawMessage) bool {
		if len(a) == 0 || len(b) == 0 {
			return len(a) == len(b)
		}
		var x, y any
		if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(x, y)
	})),
}

var rawJSONType = reflect.TypeOf(json.RawMessage(nil))

func isRawJSON(p cmp.Path) bool { return p.Last().Type() == rawJSONType }

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpOpts...); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// newJob returns a minimal pending job.
func newJob(id, tenant string, created time.Time) store.Job {
	return store.Job{
		ID: id, Tenant: tenant, Type: "report", Lane: "default", Priority: 500,
		State: store.StatePending, CreatedAt: created, UpdatedAt: created, EnqueuedAt: created,
	}
}

// write runs fn in one Write and fails the test on error.
func write(t *testing.T, s store.Store, fn func(w store.Writer) error) {
	t.Helper()
	if err := s.Write(context.Background(), fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// insert stores jobs in one Write and fails the test on any error.
func insert(t *testing.T, s store.Store, jobs ...store.Job) {
	t.Helper()
	write(t, s, func(w store.Writer) error {
		for _, j := range jobs {
			if err := w.JobInsert(context.Background(), j); err != nil {
				return err
			}
		}
		return nil
	})
}

func get(t *testing.T, s store.Store, id string) store.Job {
	t.Helper()
	j, err := s.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("JobGet(%s): %v", id, err)
	}
	return j
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func ids(jobs []store.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// jobID returns a fixed-width, sortable id for the suite.
func jobID(prefix string, i int) string {
	const digits = "0123456789"
	b := []byte(prefix + "-00000")
	for k := len(b) - 1; i > 0 && b[k] != '-'; k-- {
		b[k] = digits[i%10]
		i /= 10
	}
	return string(b)
}

var ctx = context.Background()
