-- Deploy history-search:_search_reveal to pg
-- requires: search_reveals
-- requires: _query_analysis
-- The function lives in db/functions/_search_reveal.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_reveal.sql

RESET ROLE;
COMMIT;
