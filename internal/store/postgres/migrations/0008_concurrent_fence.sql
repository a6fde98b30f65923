-- The leader's fence for two writer connections whose transactions run
-- at once (package postgres, "Concurrent transactions").
--
-- The fence takes the leadership row FOR KEY SHARE, not FOR SHARE: fenced
-- transactions never wait for one another, and a renewal (an UPDATE of
-- expires_at, a FOR NO KEY UPDATE) never waits for them either. A
-- campaign changes term, which the unique index below makes a key column,
-- so its UPDATE takes the row FOR UPDATE and still waits until every
-- transaction fenced under the old term has ended.
CREATE UNIQUE INDEX leadership_term ON leadership (term);

-- Each writer connection counts its commits in a row of its own (slot),
-- so that the count is no row lock two fenced transactions share.
ALTER TABLE leader_terms ADD COLUMN slot INT NOT NULL DEFAULT 0;
ALTER TABLE leader_terms DROP CONSTRAINT leader_terms_pkey;
ALTER TABLE leader_terms ADD PRIMARY KEY (term, slot);

CREATE FUNCTION fairway_fence(p_holder TEXT, p_term BIGINT, p_slot INT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM leadership
        WHERE id = 1 AND holder = p_holder AND term = p_term AND expires_at > clock_timestamp()
        FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'term % of % no longer leads', p_term, p_holder USING ERRCODE = 'FWDEP';
    END IF;
    INSERT INTO leader_terms (term, slot, holder, first_commit_at, last_commit_at, commits)
        VALUES (p_term, p_slot, p_holder, clock_timestamp(), clock_timestamp(), 1)
        ON CONFLICT (term, slot) DO UPDATE SET last_commit_at = clock_timestamp(), commits = leader_terms.commits + 1;
END
$$;

-- The fence of the servers before this migration (one writer connection),
-- kept so that a leader still running the previous release during a
-- rollout goes on committing until a new one takes over: slot 0.
CREATE OR REPLACE FUNCTION fairway_fence(p_holder TEXT, p_term BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM fairway_fence(p_holder, p_term, 0);
END
$$;
