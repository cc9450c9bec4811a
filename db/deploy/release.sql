-- Deploy history-search:release to pg
-- requires: schema
-- The release marker, reworked at each release (docs/releases.md): the
-- function lives in db/functions/schema_release.sql.
-- Reworked after v0.1.0: history-search 0.2.0
-- Reworked after v0.2.0: history-search 0.3.0
-- Reworked after v0.3.0: history-search 0.4.0
-- Reworked after v0.4.0: history-search 0.5.0
-- Reworked after v0.5.0: history-search 0.6.0
-- Reworked after v0.6.0: history-search 0.7.0
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/schema_release.sql

RESET ROLE;
COMMIT;
