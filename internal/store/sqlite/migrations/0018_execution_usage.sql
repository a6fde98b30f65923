-- What an attempt's processes used, as the worker measured it (NULL: not
-- measured, e.g. a handler that runs no command): user and system CPU in
-- microseconds, the memory high-water mark in bytes, and where the figures
-- come from ("cgroup": the job's own cgroup; "rusage": wait4 of the
-- command and the escaped processes the worker reaped).
ALTER TABLE executions ADD COLUMN cpu_user_us INTEGER;
ALTER TABLE executions ADD COLUMN cpu_system_us INTEGER;
ALTER TABLE executions ADD COLUMN peak_rss_bytes INTEGER;
ALTER TABLE executions ADD COLUMN usage_source TEXT;
