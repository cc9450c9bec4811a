-- Deploy history-search:_search_history to pg
-- The function lives in db/functions/_search_history.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_history.sql

RESET ROLE;
COMMIT;
