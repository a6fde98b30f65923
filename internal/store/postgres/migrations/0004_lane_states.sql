-- Lanes an operator paused (a paused lane leases nothing), kept across
-- restarts.
CREATE TABLE lane_states (
    lane       TEXT    NOT NULL PRIMARY KEY,
    paused     BOOLEAN NOT NULL,
    note       TEXT    NOT NULL,
    changed_at BIGINT  NOT NULL,
    changed_by TEXT    NOT NULL
);
