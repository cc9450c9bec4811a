-- Deploy history-search:purge to pg
-- The procedure lives in db/functions/purge.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/purge.sql

RESET ROLE;
COMMIT;
