-- A job may ask for its command to run through /bin/sh -c (when its type
-- allows it).
ALTER TABLE jobs ADD COLUMN shell INTEGER NOT NULL DEFAULT 0 CHECK (shell IN (0, 1));
