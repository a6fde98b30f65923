-- Checks that run inside the database, so that the statements of a write
-- transaction can be sent together (pipeline mode) and still fail it.

-- fairway_expect_rows fails the statement unless a batched UPDATE found
-- every job it meant to change (sqlstore's pipelined transitions).
CREATE FUNCTION fairway_expect_rows(got BIGINT, want BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    IF got <> want THEN
        RAISE EXCEPTION '% of % batched transitions found their job in the expected state and attempt', got, want
            USING ERRCODE = 'FWCON';
    END IF;
END
$$;

-- fairway_fence fails the transaction unless holder's term still leads
-- (package leader): it takes the leadership row FOR SHARE, so that no new
-- term begins before the transaction ends, and counts the commit in
-- leader_terms.
CREATE FUNCTION fairway_fence(p_holder TEXT, p_term BIGINT) RETURNS VOID
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM leadership
        WHERE id = 1 AND holder = p_holder AND term = p_term AND expires_at > clock_timestamp()
        FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'term % of % no longer leads', p_term, p_holder USING ERRCODE = 'FWDEP';
    END IF;
    INSERT INTO leader_terms (term, holder, first_commit_at, last_commit_at, commits)
        VALUES (p_term, p_holder, clock_timestamp(), clock_timestamp(), 1)
        ON CONFLICT (term) DO UPDATE SET last_commit_at = clock_timestamp(), commits = leader_terms.commits + 1;
END
$$;
