-- Deploy history-search:_query_analysis to pg
-- The function lives in db/functions/_query_analysis.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_analysis.sql

RESET ROLE;
COMMIT;
