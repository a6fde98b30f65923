-- A held attempt's start reported with its completion, found through its
-- outcome event (internal/store doc.go, "The hot row and its indexes";
-- sqlstore's lateStartSource). The transition that finishes a drained job
-- draws the started event's id and then the outcome event's, one after
-- the other: the start is end_event_id - 1, and jobs_end_event, which
-- the finish writes anyway, gives those starts in id order. So
-- jobs_start_event holds only the other started events of held
-- attempts (a start reported on its own, with start_event_at; or one
-- whose outcome event is not the next id), and the finish of a drained
-- job writes one index entry fewer. The audit feed reads both, as one.
DROP INDEX jobs_start_event;
CREATE INDEX jobs_start_event ON jobs (start_event_id)
    WHERE start_event_id IS NOT NULL
        AND (start_event_at IS NOT NULL OR end_event_id IS NULL OR end_event_id <> start_event_id + 1);
