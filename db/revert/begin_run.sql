-- Revert history-search:begin_run from pg: back to its @v0.3.0 version.
-- That version's deploy begins by dropping 0.2.0's six-argument function,
-- which is long gone here: give it one to drop, then run it as released.
BEGIN;
SET LOCAL ROLE history_owner;
CREATE FUNCTION history.begin_run(text, text, text, text, text[], text[]) RETURNS void LANGUAGE sql AS 'SELECT NULL::void';
RESET ROLE;
COMMIT;

\ir ../deploy/begin_run@v0.3.0.sql
