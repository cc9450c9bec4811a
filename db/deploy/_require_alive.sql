-- Deploy history-search:_require_alive to pg
-- The function lives in db/functions/_require_alive.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_require_alive.sql

RESET ROLE;
COMMIT;
