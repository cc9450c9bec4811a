-- Revert history-search:release from pg: back to its @v0.5.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:release to pg
-- requires: schema
-- The release marker, reworked at each release (docs/releases.md): the
-- function lives in db/functions/schema_release.sql.
-- Reworked after v0.1.0: history-search 0.2.0
-- Reworked after v0.2.0: history-search 0.3.0
-- Reworked after v0.3.0: history-search 0.4.0
-- Reworked after v0.4.0: history-search 0.5.0
BEGIN;
SET LOCAL ROLE history_owner;

-- schema_release: the release of history-search this schema is at. Each
-- release reworks the plan's `release` change to name itself here, so the
-- database knows its release whichever tool deployed it (`history-search
-- check` and `--version` compare the two). Executable by the owner only:
-- DBAs read it as the owner or a superuser.
CREATE OR REPLACE FUNCTION history.schema_release()
RETURNS text
LANGUAGE sql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
RETURN '0.5.0';

COMMENT ON FUNCTION history.schema_release() IS 'history-search: the release this schema is at';

RESET ROLE;
COMMIT;
