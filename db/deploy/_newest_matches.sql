-- Deploy history-search:_newest_matches to pg
-- The function lives in db/functions/_newest_matches.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_newest_matches.sql

RESET ROLE;
COMMIT;
