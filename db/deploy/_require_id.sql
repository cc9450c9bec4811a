-- Deploy history-search:_require_id to pg
-- The function lives in db/functions/_require_id.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_require_id.sql

RESET ROLE;
COMMIT;
