-- The leader's fence without a row lock (package postgres, "The fence";
-- package leader). A fenced transaction used to take the leadership row
-- FOR KEY SHARE: a tuple lock, which writes WAL, dirties the row's page
-- and, when the two writer connections hold it at once, makes a
-- MultiXact; and it counted its commit with an upsert, which locks the
-- witness row before updating it. That was a fifth of a steady
-- transaction's time in the database.
--
-- Now a fenced transaction takes, first, a transaction-level advisory
-- lock SHARED, and only then checks the term, in a statement of its own
-- and so (READ COMMITTED) with a snapshot taken after the lock was
-- granted. Every UPDATE of leadership that changes term (a campaign, of
-- this release or an earlier one) takes the same lock EXCLUSIVELY in a
-- trigger, before it commits. So a campaign commits only once every
-- transaction holding the lock has ended, and a fenced transaction that
-- asks for the lock after the campaign did gets it only after the
-- campaign committed, and then sees the new term and fails: no
-- transaction fenced under a term commits after the next term began.
--
-- The key: advisory locks belong to the database, not to a schema, so
-- the key holds the leadership table's OID (unique in the database):
-- fairway schemas side by side never share it. The high half is 'fwfe'.
CREATE FUNCTION fairway_fence_key(p_leadership OID) RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS $$ SELECT (x'66776665'::bigint << 32) | p_leadership::bigint $$;

CREATE FUNCTION fairway_new_term_barrier() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(fairway_fence_key(TG_RELID));
    RETURN NEW;
END
$$;

CREATE TRIGGER leadership_new_term BEFORE UPDATE ON leadership
    FOR EACH ROW WHEN (OLD.term IS DISTINCT FROM NEW.term)
    EXECUTE FUNCTION fairway_new_term_barrier();

-- A transaction that is not READ COMMITTED took its snapshot before the
-- lock was granted, so it keeps the row lock of 0008; it takes no
-- advisory lock (a campaign holding the row while it waits for the
-- advisory lock could otherwise wait for a transaction waiting for the
-- row). The witness is an UPDATE of this connection's row, inserted by
-- its first commit of the term: no lock before the update.
CREATE OR REPLACE FUNCTION fairway_fence(p_holder TEXT, p_term BIGINT, p_slot INT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('transaction_isolation') = 'read committed' THEN
        PERFORM pg_advisory_xact_lock_shared(fairway_fence_key('leadership'::regclass));
        PERFORM 1 FROM leadership
            WHERE id = 1 AND holder = p_holder AND term = p_term AND expires_at > clock_timestamp();
    ELSE
        PERFORM 1 FROM leadership
            WHERE id = 1 AND holder = p_holder AND term = p_term AND expires_at > clock_timestamp()
            FOR KEY SHARE;
    END IF;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'term % of % no longer leads', p_term, p_holder USING ERRCODE = 'FWDEP';
    END IF;
    UPDATE leader_terms SET last_commit_at = clock_timestamp(), commits = commits + 1
        WHERE term = p_term AND slot = p_slot;
    IF NOT FOUND THEN
        INSERT INTO leader_terms (term, slot, holder, first_commit_at, last_commit_at, commits)
            VALUES (p_term, p_slot, p_holder, clock_timestamp(), clock_timestamp(), 1)
            ON CONFLICT (term, slot) DO UPDATE SET last_commit_at = clock_timestamp(), commits = leader_terms.commits + 1;
    END IF;
END
$$;

-- The CHECK constraints of the tables every write transaction inserts
-- into or updates (jobs, executions), their lists of states as one array
-- constant instead of an ARRAY[...] of one constant each. PostgreSQL reads
-- a table's checks from their stored node trees (stringToNode) and plans
-- them again in every statement that inserts or updates a row, whatever
-- columns it sets: in a steady run, a tenth of the writer's CPU went to
-- these, most of it to the size of the trees (1,774 characters for the
-- state's; 766 as an array constant). Same rules: a NULL passes a CHECK,
-- so final_state's "IS NULL OR" said nothing more.
ALTER TABLE jobs
    DROP CONSTRAINT jobs_state_check,
    ADD CONSTRAINT jobs_state_check
        CHECK (state = ANY ('{blocked,pending,leased,running,retry_wait,succeeded,failed,cancelled}'::text[])),
    DROP CONSTRAINT jobs_final_state_check,
    ADD CONSTRAINT jobs_final_state_check CHECK (final_state = ANY ('{succeeded,failed,cancelled}'::text[])),
    DROP CONSTRAINT jobs_attempt_outcome_check,
    ADD CONSTRAINT jobs_attempt_outcome_check
        CHECK (attempt_outcome = ANY ('{succeeded,failed,cancelled,lost,timeout}'::text[]));
ALTER TABLE executions
    DROP CONSTRAINT executions_outcome_check,
    ADD CONSTRAINT executions_outcome_check CHECK (outcome = ANY ('{succeeded,failed,cancelled,lost,timeout}'::text[])),
    DROP CONSTRAINT executions_result_state_check,
    ADD CONSTRAINT executions_result_state_check CHECK (result_state = ANY ('{pending,written,failed}'::text[]));
