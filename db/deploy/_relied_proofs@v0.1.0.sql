-- Deploy history-search:_relied_proofs to pg
-- The function lives in db/functions/_relied_proofs.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _relied_proofs: the unrevoked identity proofs a message's eligibility or
-- speaker attribution relies on for this audience and requester:
--  * every audience account that reads a direct conversation of the message
--    or of its lineage only through a linked account relies on the proofs of
--    its identity component;
--  * a message written by an account linked to the requester (not the
--    requester itself) relies on the proofs of the requester's component.
-- Whole components are recorded, not one path: revoking any proof among them
-- makes the delivery check look again (conservative by design).
-- PL/pgSQL rather than SQL so that its plan is cached for the session:
-- search_history calls it once per returned message.
CREATE OR REPLACE FUNCTION history._relied_proofs(p_message bigint, p_audience bigint[], p_requester bigint)
RETURNS bigint[]
LANGUAGE plpgsql
STABLE
AS $function$
BEGIN
    RETURN (
        WITH points AS (
            SELECT m.conversation_key, m.sent_at FROM history.messages m WHERE m.message_key = p_message
            UNION
            SELECT l.ancestor_conversation_key, l.ancestor_sent_at FROM history.message_lineage l WHERE l.message_key = p_message
        ), components AS (
            SELECT a.component_key
              FROM history.accounts a
             WHERE a.account_key = ANY (p_audience)
               AND EXISTS (
                   SELECT 1 FROM points p JOIN history.conversations c ON c.conversation_key = p.conversation_key
                    WHERE c.kind = 'direct'
                      AND NOT EXISTS (SELECT 1 FROM history.memberships ms
                                       WHERE ms.conversation_key = p.conversation_key AND ms.account_key = a.account_key
                                         AND ms.since <= p.sent_at AND (ms.until IS NULL OR ms.until > p.sent_at)))
            UNION
            SELECT r.component_key
              FROM history.accounts r
              JOIN history.messages m ON m.message_key = p_message
              JOIN history.accounts author ON author.account_key = m.author_key
             WHERE r.account_key = p_requester AND author.account_key <> r.account_key
               AND author.component_key = r.component_key
        )
        SELECT coalesce(pg_catalog.array_agg(DISTINCT p.proof_key), '{}')
          FROM history.identity_proofs p
          JOIN history.accounts a ON a.account_key = p.account_a_key
         WHERE p.revoked_at IS NULL AND a.component_key IN (SELECT component_key FROM components));
END
$function$;

COMMENT ON FUNCTION history._relied_proofs(bigint, bigint[], bigint) IS
    'Internal: proofs a message''s eligibility or requester attribution relies on';
REVOKE ALL ON FUNCTION history._relied_proofs(bigint, bigint[], bigint) FROM PUBLIC;

RESET ROLE;
COMMIT;
