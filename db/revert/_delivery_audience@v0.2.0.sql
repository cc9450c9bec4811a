-- Revert history-search:_delivery_audience from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._delivery_audience(history.runs, timestamptz);
COMMIT;
-- Deploy history-search:_delivery_audience to pg
-- The function lives in db/functions/_delivery_audience.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _delivery_audience: the audience a reply is checked against now: the
-- explicit one as given, else the destination's open members at this moment
-- (someone who joined since the search must be able to read the evidence too).
CREATE OR REPLACE FUNCTION history._delivery_audience(p_run history.runs)
RETURNS bigint[]
LANGUAGE sql
STABLE
AS $function$
    SELECT coalesce(p_run.explicit_audience_keys,
                    history._default_audience(p_run.conversation_key, p_run.agent_key, pg_catalog.now()))
$function$;

COMMENT ON FUNCTION history._delivery_audience(history.runs) IS 'Internal: a run''s audience for the delivery check, as of now';
REVOKE ALL ON FUNCTION history._delivery_audience(history.runs) FROM PUBLIC;

RESET ROLE;
COMMIT;
