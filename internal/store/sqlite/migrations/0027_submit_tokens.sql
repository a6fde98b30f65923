-- Submit tokens (internal/store doc.go, "Submit tokens"): the token a
-- client sends with a submit so that the submit can be sent again when
-- its answer was lost. It is kept in the job's spec, written once with
-- it, and no index holds it: the dispatcher keeps the tokens of the last
-- store.SubmitTokenWindow in memory and reads them back from the newest
-- jobs, by id, when it rebuilds. NULL for a submit without one.
ALTER TABLE job_specs ADD COLUMN submit_token TEXT;
