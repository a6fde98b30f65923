-- The hot tables' CHECK constraints as comparisons instead of IN lists
-- (doc.go, "CHECK constraints"). SQLite evaluates `x IN (<3 or more
-- constants>)` by building an ephemeral B-tree of the constants (a page
-- cache, a B-tree and one insert per constant), every time the check
-- runs: at every INSERT, and at every UPDATE that writes the column. A
-- drained job paid four. `x = 'a' OR x = 'b' ...` is compiled to
-- comparisons and refuses exactly the same values (NULL passes both).
--
-- SQLite cannot change a table's CHECK constraints with ALTER TABLE. For
-- a change that existing rows already satisfy, its documentation
-- ("Making Other Kinds Of Table Schema Changes") allows editing the
-- table's definition in sqlite_schema with writable_schema, instead of
-- rebuilding the table. replace() leaves a definition it does not find
-- as it is (the old checks still hold, only slower); the throwaway
-- table changes the schema cookie, so that every other connection
-- reads the new definitions, and RESET makes this one read them again
-- before the migration commits (a definition that no longer parsed would
-- fail the migration here and roll it back).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(replace(replace(sql,
    'CHECK (state IN (''blocked'', ''pending'', ''leased'',
                           ''running'', ''retry_wait'', ''succeeded'', ''failed'', ''cancelled''))',
    'CHECK (state = ''blocked'' OR state = ''pending'' OR state = ''leased'' OR state = ''running''
        OR state = ''retry_wait'' OR state = ''succeeded'' OR state = ''failed'' OR state = ''cancelled'')'),
    'CHECK (final_state IS NULL OR final_state IN (''succeeded'', ''failed'', ''cancelled''))',
    'CHECK (final_state IS NULL OR final_state = ''succeeded'' OR final_state = ''failed'' OR final_state = ''cancelled'')'),
    'CHECK (attempt_outcome IN (''succeeded'', ''failed'', ''cancelled'', ''lost'', ''timeout''))',
    'CHECK (attempt_outcome = ''succeeded'' OR attempt_outcome = ''failed'' OR attempt_outcome = ''cancelled''
        OR attempt_outcome = ''lost'' OR attempt_outcome = ''timeout'')')
    WHERE type = 'table' AND name = 'jobs';
UPDATE sqlite_schema SET sql = replace(replace(sql,
    'CHECK (outcome IN (''succeeded'', ''failed'', ''cancelled'', ''lost'', ''timeout''))',
    'CHECK (outcome = ''succeeded'' OR outcome = ''failed'' OR outcome = ''cancelled''
        OR outcome = ''lost'' OR outcome = ''timeout'')'),
    'CHECK (result_state IN (''pending'', ''written'', ''failed''))',
    'CHECK (result_state = ''pending'' OR result_state = ''written'' OR result_state = ''failed'')')
    WHERE type = 'table' AND name = 'executions';
CREATE TABLE migration_0028_schema_cookie (x INTEGER);
DROP TABLE migration_0028_schema_cookie;
PRAGMA writable_schema = RESET;
