-- _run_label: how errors and logs name a run without its token. The token is
-- the run's credential (whoever holds it may search as the run), and errors
-- reach server logs and the services between the database and the model; a
-- digest prefix lets whoever holds the token match the name, and grants nothing.
CREATE OR REPLACE FUNCTION history._run_label(p_run uuid)
RETURNS text
LANGUAGE sql
IMMUTABLE
STRICT
SET search_path = pg_catalog, history, pg_temp
AS $function$
    -- The first 12 hex digits of SHA-256 of the token's text form.
    SELECT pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(p_run::text, 'UTF8')), 'hex'), 12)
$function$;

COMMENT ON FUNCTION history._run_label(uuid) IS
    'Internal: a run''s name in errors, the first 12 hex digits of SHA-256 of its token (never the token)';
REVOKE ALL ON FUNCTION history._run_label(uuid) FROM PUBLIC;
