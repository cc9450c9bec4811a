-- _relied_proofs: the unrevoked identity proofs a message's eligibility or
-- speaker attribution relies on for this audience and requester:
--  * every audience account that reads a direct conversation of the message
--    or of its lineage only through a linked account relies on the proofs of
--    its identity component;
--  * a message written by an account linked to the requester (not the
--    requester itself) relies on the proofs of the requester's component.
-- Whole components are recorded, not one path: revoking any proof among them
-- makes the delivery check look again (conservative by design).
-- _relied_proofs_of answers for every message of p_messages in one
-- statement (the search's audit: on Citus one local statement, where a
-- statement per message costs a millisecond each), as an object keyed by
-- message key (a message relying on no proof has no key); _relied_proofs is
-- the one-message form.
DROP FUNCTION IF EXISTS history._relied_proofs(bigint, bigint[], bigint);
CREATE OR REPLACE FUNCTION history._relied_proofs_of(p_tenant integer, p_messages bigint[], p_audience bigint[],
                                                     p_requester bigint)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN (
        WITH points AS (  -- each message's own place and its lineage's
            SELECT m.message_key, m.conversation_key, m.sent_at FROM history.messages m
             WHERE m.message_key = ANY (p_messages) AND m.tenant_key = p_tenant
            UNION
            SELECT l.message_key, l.ancestor_conversation_key, l.ancestor_sent_at FROM history.message_lineage l
             WHERE l.message_key = ANY (p_messages) AND l.tenant_key = p_tenant
        ), components AS (
            SELECT p.message_key, a.component_key
              FROM points p
              JOIN history.conversations c ON c.conversation_key = p.conversation_key AND c.tenant_key = p_tenant
              JOIN history.accounts a ON a.account_key = ANY (p_audience) AND a.tenant_key = p_tenant
             WHERE c.kind = 'direct'
               AND NOT EXISTS (SELECT 1 FROM history.memberships ms
                                WHERE ms.conversation_key = p.conversation_key AND ms.account_key = a.account_key
                                  AND ms.tenant_key = p_tenant
                                  AND ms.since <= p.sent_at AND (ms.until IS NULL OR ms.until > p.sent_at))
            UNION
            SELECT m.message_key, r.component_key
              FROM history.messages m
              JOIN history.accounts author ON author.account_key = m.author_key AND author.tenant_key = p_tenant
              JOIN history.accounts r ON r.account_key = p_requester AND r.tenant_key = p_tenant
             WHERE m.message_key = ANY (p_messages) AND m.tenant_key = p_tenant
               AND author.account_key <> r.account_key AND author.component_key = r.component_key
        )
        SELECT coalesce(pg_catalog.jsonb_object_agg(x.message_key::text, x.proofs), '{}')
          FROM (SELECT c.message_key, pg_catalog.array_agg(DISTINCT p.proof_key ORDER BY p.proof_key) AS proofs
                  FROM components c
                  JOIN history.accounts a ON a.component_key = c.component_key AND a.tenant_key = p_tenant
                  JOIN history.identity_proofs p ON p.account_a_key = a.account_key AND p.tenant_key = p_tenant
                 WHERE p.revoked_at IS NULL
                 GROUP BY c.message_key) x);
END
$function$;

COMMENT ON FUNCTION history._relied_proofs_of(integer, bigint[], bigint[], bigint) IS
    'Internal: by message key, the proofs each message''s eligibility or requester attribution relies on';
REVOKE ALL ON FUNCTION history._relied_proofs_of(integer, bigint[], bigint[], bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION history._relied_proofs(p_tenant integer, p_message bigint, p_audience bigint[], p_requester bigint)
RETURNS bigint[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN coalesce(ARRAY(SELECT pg_catalog.jsonb_array_elements_text(
                              history._relied_proofs_of(p_tenant, ARRAY[p_message], p_audience, p_requester)
                              -> p_message::text)::bigint), '{}');
END
$function$;

COMMENT ON FUNCTION history._relied_proofs(integer, bigint, bigint[], bigint) IS
    'Internal: proofs a message''s eligibility or requester attribution relies on';
REVOKE ALL ON FUNCTION history._relied_proofs(integer, bigint, bigint[], bigint) FROM PUBLIC;
