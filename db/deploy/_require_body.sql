-- Deploy history-search:_require_body to pg
-- The function lives in db/functions/_require_body.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_require_body.sql

RESET ROLE;
COMMIT;
