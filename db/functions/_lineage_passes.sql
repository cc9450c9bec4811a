-- _lineage_passes: true when every message in p_message's lineage
-- (transitively, from the precomputed closure) could be read by every
-- account of p_audience when it was sent. An empty audience always passes.
-- PL/pgSQL, every statement naming p_tenant: Citus cannot plan a SQL
-- function's parameters over distributed tables, and routes each statement
-- to the tenant's shard.
DROP FUNCTION IF EXISTS history._lineage_passes(bigint, bigint[]);
CREATE OR REPLACE FUNCTION history._lineage_passes(p_tenant integer, p_message bigint, p_audience bigint[])
RETURNS boolean
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_ancestors     bigint[];
    v_conversations bigint[];
    v_windows       tstzmultirange[];
BEGIN
    IF cardinality(p_audience) = 0 THEN
        RETURN true;
    END IF;
    v_ancestors := ARRAY(SELECT DISTINCT l.ancestor_conversation_key FROM history.message_lineage l
                          WHERE l.tenant_key = p_tenant AND l.message_key = p_message);
    -- the rule itself is _lineage_blocked's; this computes the windows it needs
    SELECT coalesce(array_agg(a.conversation_key), '{}'), coalesce(array_agg(a.visible), '{}')
      INTO v_conversations, v_windows
      FROM history._audience_windows(p_tenant, p_audience, v_ancestors) a;
    RETURN NOT history._lineage_blocked(p_tenant, p_message, v_conversations, v_windows, p_audience);
END
$function$;

COMMENT ON FUNCTION history._lineage_passes(integer, bigint, bigint[]) IS
    'Internal: does every ancestor of a message pass the audience check?';
REVOKE ALL ON FUNCTION history._lineage_passes(integer, bigint, bigint[]) FROM PUBLIC;
