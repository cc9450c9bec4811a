-- Deploy history-search:search_history to pg
-- requires: _search_history
-- The procedure lives in db/functions/search_history.sql.
-- Reworked after 0.1.0: the hits come from _search_reveal after the COMMIT.
-- Reworked after v0.2.0: Compile the reveal inside the search's transaction, so catalog reads it prunes are not WAL its reveal waits for
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/search_history.sql

RESET ROLE;
COMMIT;
