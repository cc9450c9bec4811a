-- Deploy history-search:_require_alive to pg
-- The function lives in db/functions/_require_alive.sql.
-- Reworked after v0.1.0: Writes to one message serialise: lock the message row, then read its current event.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_require_alive.sql

RESET ROLE;
COMMIT;
