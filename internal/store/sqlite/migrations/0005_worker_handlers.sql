-- The job types a worker runs without a command (SDK handlers), as a JSON
-- array; NULL when the worker did not say (it may run any type so).
ALTER TABLE workers ADD COLUMN handlers TEXT;
