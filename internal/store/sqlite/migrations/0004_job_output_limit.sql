-- The most output of one attempt that is kept (bytes, both streams); past
-- it the worker keeps the head and the tail. 0: the server's default.
ALTER TABLE jobs ADD COLUMN output_limit INTEGER NOT NULL DEFAULT 0 CHECK (output_limit >= 0);
