-- Revert history-search:post_message from pg: back to its @v0.3.0 version.
-- That version's deploy begins by dropping 0.1.0's six-argument function,
-- which is long gone here: give it one to drop, then run it as released.
BEGIN;
SET LOCAL ROLE history_owner;
CREATE FUNCTION history.post_message(text, text, text, text, timestamptz, text[]) RETURNS void
    LANGUAGE sql AS 'SELECT NULL::void';
RESET ROLE;
COMMIT;

\ir ../deploy/post_message@v0.3.0.sql
