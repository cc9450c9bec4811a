-- Deploy history-search:_lineage_blocked to pg
-- The function lives in db/functions/_lineage_blocked.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _lineage_blocked: true when some message in p_message's lineage (from the
-- precomputed closure) was sent when the audience could not read it, given
-- the audience's windows already computed by the caller (_audience_windows
-- as two parallel arrays). An empty audience blocks nothing. Set-based and
-- inlinable: search_history calls it per candidate without recomputing windows.
CREATE OR REPLACE FUNCTION history._lineage_blocked(
    p_message bigint, p_window_conversations bigint[], p_windows tstzmultirange[], p_audience bigint[])
RETURNS boolean
LANGUAGE sql
STABLE
AS $function$
    SELECT pg_catalog.cardinality(p_audience) > 0 AND EXISTS (
        SELECT 1
          FROM history.message_lineage l
         WHERE l.message_key = p_message
           AND NOT coalesce((SELECT l.ancestor_sent_at OPERATOR(pg_catalog.<@) w.visible
                               FROM ROWS FROM (pg_catalog.unnest(p_window_conversations), pg_catalog.unnest(p_windows)) w(conversation_key, visible)
                              WHERE w.conversation_key OPERATOR(pg_catalog.=) l.ancestor_conversation_key), false))
$function$;

COMMENT ON FUNCTION history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[]) IS
    'Internal: is some ancestor of a message outside the given audience windows?';
REVOKE ALL ON FUNCTION history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
