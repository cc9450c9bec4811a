-- Deploy history-search:search_history to pg
-- requires: _search_history
-- The procedure lives in db/functions/search_history.sql.
-- Reworked after 0.1.0: the hits come from _search_reveal after the COMMIT.
-- Reworked after v0.2.0: Compile the reveal inside the search's transaction, so catalog reads it prunes are not WAL its reveal waits for
-- Reworked after v0.3.0: The warm-up call of the reveal, before the search: its compile's catalog pruning is WAL the search's synchronous commit flushes, not WAL the first reveal of a session waits for
-- Reworked after v0.5.0: The reveal defers rather than waits; the procedure commits synchronously and reveals again
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/search_history.sql

RESET ROLE;
COMMIT;
