-- _outside_windows: true when p_at lies outside p_conversation's window in
-- the audience's windows (p_window_conversations, p_windows: parallel arrays,
-- as _audience_windows returns them), or the conversation has none: the
-- lineage rule's test of one ancestor. Pure (it reads no table), so a
-- statement on a distributed table may call it: on Citus it runs on the
-- shard's worker with the statement (a function that reads a distributed
-- table may not: "cannot execute a distributed query from a query on a shard").
CREATE OR REPLACE FUNCTION history._outside_windows(
    p_conversation bigint, p_at timestamptz, p_window_conversations bigint[], p_windows tstzmultirange[])
RETURNS boolean
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT NOT coalesce((SELECT p_at OPERATOR(pg_catalog.<@) w.visible
                           FROM ROWS FROM (pg_catalog.unnest(p_window_conversations), pg_catalog.unnest(p_windows)) w(conversation_key, visible)
                          WHERE w.conversation_key OPERATOR(pg_catalog.=) p_conversation), false)
$function$;

COMMENT ON FUNCTION history._outside_windows(bigint, timestamptz, bigint[], tstzmultirange[]) IS
    'Internal: is a time outside its conversation''s audience window (the lineage rule''s test of one ancestor)?';
REVOKE ALL ON FUNCTION history._outside_windows(bigint, timestamptz, bigint[], tstzmultirange[]) FROM PUBLIC;
