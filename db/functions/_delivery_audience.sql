-- _delivery_audience: the audience a reply sent at p_sent_at is checked
-- against now: the explicit one as given, else the destination's members
-- whose membership is open now (a join recorded ahead of the clock counts as
-- open) or covers p_sent_at ([since, until) holds it): someone who joined
-- since the search, or who was a member when the reply went out, must be able
-- to read the evidence too. A null p_sent_at (no reply yet) adds nobody.
CREATE OR REPLACE FUNCTION history._delivery_audience(p_run history.runs, p_sent_at timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_now bigint[];
    v_then bigint[];
BEGIN
    IF p_run.explicit_audience_keys IS NOT NULL THEN
        RETURN p_run.explicit_audience_keys;
    END IF;
    -- PL/pgSQL, one statement per shard read, each naming the run's tenant: Citus
    -- plans no SQL-language function with parameters over distributed tables.
    v_now := history._default_audience(p_run.conversation_key, p_run.agent_key, pg_catalog.now(), p_run.tenant_key);
    v_then := ARRAY(SELECT m.account_key
                      FROM history.memberships m
                     WHERE m.conversation_key = p_run.conversation_key AND m.tenant_key = p_run.tenant_key
                       AND m.account_key <> p_run.agent_key
                       AND m.since <= p_sent_at AND (m.until IS NULL OR m.until > p_sent_at));
    RETURN (SELECT coalesce(pg_catalog.array_agg(DISTINCT x.k), '{}') FROM pg_catalog.unnest(v_now || v_then) x(k));
END
$function$;

COMMENT ON FUNCTION history._delivery_audience(history.runs, timestamptz) IS
    'Internal: a run''s audience for the delivery check of a reply sent at a time: members open now or at that time';
REVOKE ALL ON FUNCTION history._delivery_audience(history.runs, timestamptz) FROM PUBLIC;
