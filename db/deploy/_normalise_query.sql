-- Deploy history-search:_normalise_query to pg
-- The function lives in db/functions/_normalise_query.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_normalise_query.sql

RESET ROLE;
COMMIT;
