-- Deploy history-search:_default_audience to pg
-- The function lives in db/functions/_default_audience.sql.
-- Reworked after v0.1.0: A membership whose since is ahead of the clock counts as open.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_default_audience.sql

RESET ROLE;
COMMIT;
