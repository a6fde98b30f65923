-- Leadership among several servers on this database (package leader): one
-- row holding the current term, its holder and when its lease runs out
-- (the database's clock), and per term the first and last commit it made.
CREATE TABLE leadership (
    id         SMALLINT    NOT NULL PRIMARY KEY CHECK (id = 1),
    term       BIGINT      NOT NULL,
    holder     TEXT        NOT NULL,
    address    TEXT        NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO leadership (id, term, holder, address, expires_at) VALUES (1, 0, '', '', to_timestamp(0));

CREATE TABLE leader_terms (
    term            BIGINT      NOT NULL PRIMARY KEY,
    holder          TEXT        NOT NULL,
    first_commit_at TIMESTAMPTZ NOT NULL,
    last_commit_at  TIMESTAMPTZ NOT NULL,
    commits         BIGINT      NOT NULL
);
