-- Revert history-search:_default_audience from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_default_audience to pg
-- The function lives in db/functions/_default_audience.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _default_audience: the accounts whose membership of the conversation is
-- open at p_at, the agent excepted, in key order.
CREATE OR REPLACE FUNCTION history._default_audience(p_conversation bigint, p_agent bigint, p_at timestamptz)
RETURNS bigint[]
LANGUAGE sql
STABLE
AS $function$
    SELECT coalesce(pg_catalog.array_agg(DISTINCT m.account_key), '{}')
      FROM history.memberships m
     WHERE m.conversation_key = p_conversation
       AND m.account_key <> p_agent
       AND m.since <= p_at AND (m.until IS NULL OR m.until > p_at)
$function$;

COMMENT ON FUNCTION history._default_audience(bigint, bigint, timestamptz) IS
    'Internal: open members of a conversation at a time, the agent excepted';
REVOKE ALL ON FUNCTION history._default_audience(bigint, bigint, timestamptz) FROM PUBLIC;

RESET ROLE;
COMMIT;
