-- Deploy history-search:_lineage_passes to pg
-- The function lives in db/functions/_lineage_passes.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _lineage_passes: true when every message in p_message's lineage
-- (transitively, from the precomputed closure) could be read by every
-- account of p_audience when it was sent. An empty audience always passes.
CREATE OR REPLACE FUNCTION history._lineage_passes(p_message bigint, p_audience bigint[])
RETURNS boolean
LANGUAGE sql
STABLE
AS $function$
    -- the rule itself is _lineage_blocked's; this computes the windows it needs
    SELECT NOT history._lineage_blocked(p_message, w.conversations, w.windows, p_audience)
      FROM (SELECT coalesce(pg_catalog.array_agg(a.conversation_key), '{}') AS conversations,
                   coalesce(pg_catalog.array_agg(a.visible), '{}') AS windows
              FROM history._audience_windows(
                       p_audience,
                       ARRAY(SELECT DISTINCT l.ancestor_conversation_key
                               FROM history.message_lineage l WHERE l.message_key = p_message)) a) w
$function$;

COMMENT ON FUNCTION history._lineage_passes(bigint, bigint[]) IS
    'Internal: does every ancestor of a message pass the audience check?';
REVOKE ALL ON FUNCTION history._lineage_passes(bigint, bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
