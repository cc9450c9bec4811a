-- _member_windows: for each of p_conversations that p_account has been a
-- member of, the times it was one: its membership intervals [since, until).
-- PL/pgSQL, its statement naming p_tenant: Citus refuses a SQL function
-- over a distributed table in a statement's FROM.
DROP FUNCTION IF EXISTS history._member_windows(bigint, bigint[]);
CREATE OR REPLACE FUNCTION history._member_windows(p_tenant integer, p_account bigint, p_conversations bigint[])
RETURNS TABLE (conversation_key bigint, visible tstzmultirange)
LANGUAGE plpgsql
STABLE
AS $function$
BEGIN
    RETURN QUERY
    SELECT m.conversation_key, pg_catalog.range_agg(pg_catalog.tstzrange(m.since, m.until, '[)'))
      FROM history.memberships m
     WHERE m.tenant_key = p_tenant AND m.account_key = p_account AND m.conversation_key = ANY (p_conversations)
     GROUP BY m.conversation_key;
END
$function$;

COMMENT ON FUNCTION history._member_windows(integer, bigint, bigint[]) IS
    'Internal: per conversation, when an account was a member';
REVOKE ALL ON FUNCTION history._member_windows(integer, bigint, bigint[]) FROM PUBLIC;
