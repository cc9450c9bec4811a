-- Deploy history-search:search_history to pg
-- requires: _search_history
-- The procedure lives in db/functions/search_history.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/search_history.sql

RESET ROLE;
COMMIT;
