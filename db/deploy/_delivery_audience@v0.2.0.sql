-- Deploy history-search:_delivery_audience to pg
-- The function lives in db/functions/_delivery_audience.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
BEGIN;
SET LOCAL ROLE history_owner;

-- The audience now depends on the reply's time: the one-argument version goes.
DROP FUNCTION history._delivery_audience(history.runs);

-- _delivery_audience: the audience a reply sent at p_sent_at is checked
-- against now: the explicit one as given, else the destination's members
-- whose membership is open now (a join recorded ahead of the clock counts as
-- open) or covers p_sent_at ([since, until) holds it): someone who joined
-- since the search, or who was a member when the reply went out, must be able
-- to read the evidence too. A null p_sent_at (no reply yet) adds nobody.
CREATE OR REPLACE FUNCTION history._delivery_audience(p_run history.runs, p_sent_at timestamptz)
RETURNS bigint[]
LANGUAGE sql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT coalesce(p_run.explicit_audience_keys,
                    (SELECT coalesce(pg_catalog.array_agg(DISTINCT x.account_key), '{}')
                       FROM (SELECT pg_catalog.unnest(history._default_audience(p_run.conversation_key, p_run.agent_key,
                                                                                  pg_catalog.now())) AS account_key
                             UNION ALL
                             SELECT m.account_key
                               FROM history.memberships m
                              WHERE m.conversation_key = p_run.conversation_key
                                AND m.account_key <> p_run.agent_key
                                AND m.since <= p_sent_at AND (m.until IS NULL OR m.until > p_sent_at)) x))
$function$;

COMMENT ON FUNCTION history._delivery_audience(history.runs, timestamptz) IS
    'Internal: a run''s audience for the delivery check of a reply sent at a time: members open now or at that time';
REVOKE ALL ON FUNCTION history._delivery_audience(history.runs, timestamptz) FROM PUBLIC;

RESET ROLE;
COMMIT;
