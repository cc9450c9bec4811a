-- _audience_windows: for each conversation (of p_conversations, or all when
-- null), the times at which every account of p_audience could read it: the
-- intersection over the audience of each account's membership intervals.
-- In a direct conversation an account's linked accounts' memberships count
-- as its own; in groups and channels they never do. An empty audience has
-- no windows: callers treat it as unrestricted.
CREATE OR REPLACE FUNCTION history._audience_windows(p_audience bigint[], p_conversations bigint[])
RETURNS TABLE (conversation_key bigint, visible tstzmultirange)
LANGUAGE sql
STABLE
AS $function$
    SELECT per.conversation_key, pg_catalog.range_intersect_agg(per.visible)
      FROM (SELECT aud.account_key, m.conversation_key,
                   pg_catalog.range_agg(pg_catalog.tstzrange(m.since, m.until, '[)')) AS visible
              FROM (SELECT DISTINCT x AS account_key FROM pg_catalog.unnest(p_audience) x) aud
              JOIN history.accounts a ON a.account_key = aud.account_key
              JOIN history.accounts peer ON peer.component_key = a.component_key
              JOIN history.memberships m ON m.account_key = peer.account_key
              JOIN history.conversations c ON c.conversation_key = m.conversation_key
             WHERE (peer.account_key = aud.account_key OR c.kind = 'direct')
               AND (p_conversations IS NULL OR m.conversation_key = ANY (p_conversations))
             GROUP BY aud.account_key, m.conversation_key) per
     GROUP BY per.conversation_key
    HAVING pg_catalog.count(*) = (SELECT pg_catalog.count(DISTINCT x) FROM pg_catalog.unnest(p_audience) x)
$function$;

COMMENT ON FUNCTION history._audience_windows(bigint[], bigint[]) IS
    'Internal: per conversation, when every audience account could read it (links count in direct conversations only)';
REVOKE ALL ON FUNCTION history._audience_windows(bigint[], bigint[]) FROM PUBLIC;
