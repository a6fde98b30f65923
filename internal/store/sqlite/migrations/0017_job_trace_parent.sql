-- The job's W3C trace context (docs/tracing.md): written at submit, never
-- changed.
ALTER TABLE jobs ADD COLUMN trace_parent TEXT;
