-- Deploy history-search:verify_query_digest to pg
-- The function lives in db/functions/verify_query_digest.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/verify_query_digest.sql

RESET ROLE;
COMMIT;
