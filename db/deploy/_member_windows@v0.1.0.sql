-- Deploy history-search:_member_windows to pg
-- The function lives in db/functions/_member_windows.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _member_windows: for each of p_conversations that p_account has been a
-- member of, the times it was one: its membership intervals [since, until).
CREATE OR REPLACE FUNCTION history._member_windows(p_account bigint, p_conversations bigint[])
RETURNS TABLE (conversation_key bigint, visible tstzmultirange)
LANGUAGE sql
STABLE
AS $function$
    SELECT m.conversation_key, pg_catalog.range_agg(pg_catalog.tstzrange(m.since, m.until, '[)'))
      FROM history.memberships m
     WHERE m.account_key = p_account AND m.conversation_key = ANY (p_conversations)
     GROUP BY m.conversation_key
$function$;

COMMENT ON FUNCTION history._member_windows(bigint, bigint[]) IS
    'Internal: per conversation, when an account was a member';
REVOKE ALL ON FUNCTION history._member_windows(bigint, bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
