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
RETURN '0.7.0';

COMMENT ON FUNCTION history.schema_release() IS 'history-search: the release this schema is at';
