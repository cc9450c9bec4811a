-- Deploy history-search:_newest_matches to pg
-- The functions live in db/functions/_listed_rows.sql and _newest_matches.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_listed_rows.sql
\ir ../functions/_newest_matches.sql

RESET ROLE;
COMMIT;
