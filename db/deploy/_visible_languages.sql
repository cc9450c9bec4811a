-- Deploy history-search:_visible_languages to pg
-- requires: core_tables
-- The function lives in db/functions/_visible_languages.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_visible_languages.sql

RESET ROLE;
COMMIT;
