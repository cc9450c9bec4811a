-- Deploy history-search:_default_audience to pg
-- The function lives in db/functions/_default_audience.sql.
-- Reworked after v0.1.0: A membership whose since is ahead of the clock counts as open.
BEGIN;
SET LOCAL ROLE history_owner;

-- _default_audience: the accounts whose membership of the conversation is
-- open at p_at, the agent excepted, in key order. A membership is open at
-- p_at when it has not ended by then (until null or later): one whose since
-- is still ahead of p_at counts too, since a join recorded by a clock running
-- ahead of the database's is someone who will read the reply.
CREATE OR REPLACE FUNCTION history._default_audience(p_conversation bigint, p_agent bigint, p_at timestamptz)
RETURNS bigint[]
LANGUAGE sql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT coalesce(pg_catalog.array_agg(DISTINCT m.account_key), '{}')
      FROM history.memberships m
     WHERE m.conversation_key = p_conversation
       AND m.account_key <> p_agent
       AND (m.until IS NULL OR m.until > p_at)
$function$;

COMMENT ON FUNCTION history._default_audience(bigint, bigint, timestamptz) IS
    'Internal: members of a conversation not gone by a time (future joins count), the agent excepted';
REVOKE ALL ON FUNCTION history._default_audience(bigint, bigint, timestamptz) FROM PUBLIC;

RESET ROLE;
COMMIT;
