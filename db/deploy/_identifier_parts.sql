-- Deploy history-search:_identifier_parts to pg
-- The function lives in db/functions/_identifier_parts.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_identifier_parts.sql

RESET ROLE;
COMMIT;
