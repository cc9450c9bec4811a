-- Deploy history-search:_key_union to pg
-- requires: schema
-- The function lives in db/functions/_key_union.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_key_union.sql

RESET ROLE;
COMMIT;
