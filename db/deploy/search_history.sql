-- Deploy history-search:search_history to pg
-- requires: _search_history
-- The procedure lives in db/functions/search_history.sql.
-- Reworked after 0.1.0: the hits come from _search_reveal after the COMMIT.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/search_history.sql

RESET ROLE;
COMMIT;
