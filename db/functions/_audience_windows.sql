-- _audience_windows: for each conversation (of p_conversations, or all when
-- null), the times at which every account of p_audience could read it: the
-- intersection over the audience of each account's membership intervals.
-- In a direct conversation an account's linked accounts' memberships count
-- as its own; in groups and channels they never do. An empty audience has
-- no windows: callers treat it as unrestricted.
--
-- A conversation can only qualify if the audience accounts with the fewest
-- memberships (the pivots, one or two, of the first 16) read it, so only the conversations the
-- pivots read are examined, and each is tested by membership probes that stop
-- at the first audience account that never read it: the work is bounded by
-- the pivots' memberships plus a few probes per candidate, not by the sum of
-- every audience account's memberships (hundreds for a channel audience).
--
-- Every statement reads rows by key, so each is planned once (a custom plan
-- of the whole cost ~3 ms of planning per search, a third of a search at 100k).
-- Every statement names the tenant p_tenant. On Citus they are planned for
-- their values instead: a generic plan of a statement that joins unnest()
-- rows to a distributed table is refused ("could not create distributed
-- plan"), while with the tenant a constant Citus routes the whole statement
-- to the tenant's shard.
DROP FUNCTION IF EXISTS history._audience_windows(bigint[], bigint[]);
CREATE OR REPLACE FUNCTION history._audience_windows(p_tenant integer, p_audience bigint[], p_conversations bigint[])
RETURNS TABLE (conversation_key bigint, visible tstzmultirange)
LANGUAGE plpgsql
STABLE
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    v_audience bigint[] := ARRAY(SELECT DISTINCT x FROM pg_catalog.unnest(p_audience) x ORDER BY x);
    v_pivots   bigint[];
BEGIN
    IF pg_catalog.cardinality(v_audience) = 0 THEN
        RETURN;
    END IF;
    IF pg_catalog.current_setting('citus.version', true) IS NOT NULL THEN  -- until the function returns
        PERFORM pg_catalog.set_config('plan_cache_mode', 'force_custom_plan', true);
    END IF;
    -- The account with the fewest memberships (counted up to 256), and the
    -- next one too unless it is in that many (an agent in every conversation),
    -- among the first 16 accounts: any pivot gives the same windows, and
    -- counting a channel's hundreds of readers cost more than it saved
    -- (150 x ~100 memberships: 13 ms a search at 1M).
    SELECT pg_catalog.array_agg(r.account_key ORDER BY r.rank) INTO v_pivots
      FROM (SELECT aud.account_key, x.n, pg_catalog.row_number() OVER (ORDER BY x.n, aud.account_key) AS rank
              FROM pg_catalog.unnest(v_audience[1:16]) aud(account_key)
             CROSS JOIN LATERAL (SELECT pg_catalog.count(*) AS n
                                   FROM (SELECT FROM history.memberships m
                                          WHERE m.tenant_key = p_tenant AND m.account_key = aud.account_key LIMIT 256) y) x) r
     WHERE r.rank = 1 OR (r.rank = 2 AND r.n < 256);

    RETURN QUERY
    WITH candidates AS MATERIALIZED (  -- conversations every pivot reads (a linked account's, if direct)
        SELECT m.conversation_key, c.kind
          FROM pg_catalog.unnest(v_pivots) p(account_key)
          JOIN history.accounts a ON a.account_key = p.account_key AND a.tenant_key = p_tenant
          JOIN history.accounts peer ON peer.component_key = a.component_key AND peer.tenant_key = p_tenant
          JOIN history.memberships m ON m.account_key = peer.account_key AND m.tenant_key = p_tenant
          JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = p_tenant
         WHERE (peer.account_key = a.account_key OR c.kind = 'direct')
           AND (p_conversations IS NULL OR m.conversation_key = ANY (p_conversations))
         GROUP BY m.conversation_key, c.kind
        HAVING pg_catalog.count(DISTINCT p.account_key) = pg_catalog.cardinality(v_pivots)
    ), qualifying AS MATERIALIZED (  -- read by every audience account at some time
        SELECT cd.conversation_key, cd.kind
          FROM candidates cd
         WHERE NOT EXISTS (
                   SELECT FROM pg_catalog.unnest(v_audience) aud(account_key)
                    WHERE NOT EXISTS (SELECT FROM history.memberships m
                                       WHERE m.tenant_key = p_tenant AND m.account_key = aud.account_key
                                         AND m.conversation_key = cd.conversation_key)
                      AND (cd.kind <> 'direct'
                           OR NOT EXISTS (SELECT FROM history.accounts a
                                            JOIN history.accounts peer ON peer.component_key = a.component_key
                                                                      AND peer.tenant_key = p_tenant
                                            JOIN history.memberships m ON m.account_key = peer.account_key
                                                                      AND m.conversation_key = cd.conversation_key
                                                                      AND m.tenant_key = p_tenant
                                           WHERE a.account_key = aud.account_key AND a.tenant_key = p_tenant)))
    )
    SELECT q.conversation_key, pg_catalog.range_intersect_agg(w.visible)
      FROM qualifying q
     CROSS JOIN pg_catalog.unnest(v_audience) aud(account_key)
     CROSS JOIN LATERAL (
         SELECT pg_catalog.range_agg(pg_catalog.tstzrange(m.since, m.until, '[)')) AS visible
           FROM history.accounts a
           JOIN history.accounts peer ON peer.component_key = a.component_key AND peer.tenant_key = p_tenant
           JOIN history.memberships m ON m.account_key = peer.account_key AND m.conversation_key = q.conversation_key
                                     AND m.tenant_key = p_tenant
          WHERE a.account_key = aud.account_key AND a.tenant_key = p_tenant
            AND (peer.account_key = a.account_key OR q.kind = 'direct')) w
     GROUP BY q.conversation_key
     ORDER BY q.conversation_key;
END
$function$;

COMMENT ON FUNCTION history._audience_windows(integer, bigint[], bigint[]) IS
    'Internal: per conversation, when every audience account could read it (links count in direct conversations only)';
REVOKE ALL ON FUNCTION history._audience_windows(integer, bigint[], bigint[]) FROM PUBLIC;
