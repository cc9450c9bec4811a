-- Deploy history-search:_require_time to pg
-- The function lives in db/functions/_require_time.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_require_time.sql

RESET ROLE;
COMMIT;
