-- _audience_windows: for each conversation (of p_conversations, or all when
-- null), the times at which every account of p_audience could read it: the
-- intersection over the audience of each account's membership intervals.
-- In a direct conversation an account's linked accounts' memberships count
-- as its own; in groups and channels they never do. An empty audience has
-- no windows: callers treat it as unrestricted.
--
-- A conversation can only qualify if the audience accounts with the fewest
-- memberships (the pivots, one or two) read it, so only the conversations the
-- pivots read are examined, and only their member lists are read: the work
-- is bounded by the pivots' memberships plus those conversations' sizes, not
-- by the sum of every audience account's memberships (hundreds for a channel
-- audience).
CREATE OR REPLACE FUNCTION history._audience_windows(p_audience bigint[], p_conversations bigint[])
RETURNS TABLE (conversation_key bigint, visible tstzmultirange)
LANGUAGE sql
STABLE
AS $function$
    WITH audience AS MATERIALIZED (
        SELECT DISTINCT x AS account_key FROM pg_catalog.unnest(p_audience) x
    ), readers AS MATERIALIZED (  -- each audience account with the accounts whose memberships may count for it
        SELECT aud.account_key, peer.account_key AS reader_key
          FROM audience aud
          JOIN history.accounts a ON a.account_key = aud.account_key
          JOIN history.accounts peer ON peer.component_key = a.component_key
    ), pivots AS MATERIALIZED (
        -- the account with the fewest memberships (counted up to 256), and the
        -- next one too unless it is in that many (an agent in every conversation)
        SELECT r.account_key
          FROM (SELECT aud.account_key, x.n, pg_catalog.row_number() OVER (ORDER BY x.n, aud.account_key) AS rank
                  FROM audience aud
                 CROSS JOIN LATERAL (SELECT pg_catalog.count(*) AS n
                                       FROM (SELECT 1 FROM history.memberships m
                                              WHERE m.account_key = aud.account_key LIMIT 256) y) x) r
         WHERE r.rank = 1 OR (r.rank = 2 AND r.n < 256)
    ), candidates AS MATERIALIZED (  -- conversations every pivot reads
        SELECT m.conversation_key
          FROM pivots
          JOIN readers r ON r.account_key = pivots.account_key
          JOIN history.memberships m ON m.account_key = r.reader_key
          JOIN history.conversations c ON c.conversation_key = m.conversation_key
         WHERE (r.reader_key = r.account_key OR c.kind = 'direct')
           AND (p_conversations IS NULL OR m.conversation_key = ANY (p_conversations))
         GROUP BY m.conversation_key
        HAVING pg_catalog.count(DISTINCT r.account_key) = (SELECT pg_catalog.count(*) FROM pivots)
    ), qualifying AS MATERIALIZED (  -- read by every audience account at some time: cheap to count, rarely many
        SELECT cd.conversation_key, c.kind
          FROM candidates cd
          JOIN history.conversations c ON c.conversation_key = cd.conversation_key
          CROSS JOIN LATERAL (
              -- Read the conversation's member list once (the +0 keeps the planner
              -- from probing it once per audience account instead).
              SELECT pg_catalog.count(DISTINCT r.account_key) AS readers
                FROM history.memberships m
                JOIN readers r ON r.reader_key = m.account_key + 0
               WHERE m.conversation_key = cd.conversation_key
                 AND (r.reader_key = r.account_key OR c.kind = 'direct')) n
         WHERE n.readers = (SELECT pg_catalog.count(*) FROM audience)
    )
    SELECT per.conversation_key, pg_catalog.range_intersect_agg(per.visible)
      FROM (SELECT r.account_key, m.conversation_key,
                   pg_catalog.range_agg(pg_catalog.tstzrange(m.since, m.until, '[)')) AS visible
              FROM qualifying q
              JOIN history.memberships m ON m.conversation_key = q.conversation_key
              JOIN readers r ON r.reader_key = m.account_key
             WHERE r.reader_key = r.account_key OR q.kind = 'direct'
             GROUP BY r.account_key, m.conversation_key) per
     GROUP BY per.conversation_key
$function$;

COMMENT ON FUNCTION history._audience_windows(bigint[], bigint[]) IS
    'Internal: per conversation, when every audience account could read it (links count in direct conversations only)';
REVOKE ALL ON FUNCTION history._audience_windows(bigint[], bigint[]) FROM PUBLIC;
