-- Revert history-search:begin_run from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.begin_run(text, text, text, text, text[], text[], text);
COMMIT;
\ir ../deploy/begin_run@v0.1.0.sql
