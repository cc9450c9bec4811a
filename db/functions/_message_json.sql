-- _message_json: a message as search returns it, its body loaded from its
-- latest canonical event; speaker_role relative to the run's agent and
-- requester (with the requester's linked accounts).
-- The body is cut to at most p_body_bytes octets of UTF-8, between two
-- characters, and body_truncated says so: whatever a stored body holds, one
-- message adds a bounded amount to a search's result. The cut reads only the
-- body's first characters (left() fetches a slice of a toasted value), and is
-- done in the query so that no PL/pgSQL variable ever holds a whole body.
-- _messages_json reads every message of p_messages in one statement (the
-- search's result stage: on Citus one local statement, where a statement per
-- message costs a millisecond each); it returns an object keyed by message
-- key. _message_json is the one-message form.
DROP FUNCTION IF EXISTS history._message_json(bigint, bigint, bigint[], integer);
CREATE OR REPLACE FUNCTION history._messages_json(p_tenant integer, p_messages bigint[], p_agent bigint,
                                                  p_requester_accounts bigint[], p_body_bytes integer)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN (
        SELECT coalesce(pg_catalog.jsonb_object_agg(m.message_key::text, pg_catalog.jsonb_build_object(
                   'message_id', m.message_id,
                   'conversation_id', c.conversation_id,
                   'sent_at', m.sent_at,
                   'speaker_id', a.account_id,
                   'speaker_role', CASE WHEN m.author_key = ANY (p_requester_accounts) THEN 'requester'
                                        WHEN m.author_key = p_agent THEN 'you'
                                        ELSE 'other' END,
                   'body', CASE WHEN cut.truncated THEN (
                               -- the longest prefix of at most p_body_bytes octets that ends
                               -- before a character's first byte (a UTF-8 character is at most 4)
                               SELECT pg_catalog.convert_from(pg_catalog.substring(b.octets, 1, k.kept), 'UTF8')
                                 FROM (SELECT pg_catalog.convert_to(pg_catalog.left(e.body, p_body_bytes), 'UTF8') AS octets) b
                                 CROSS JOIN LATERAL (
                                     SELECT pg_catalog.max(n) AS kept
                                       FROM pg_catalog.generate_series(p_body_bytes - 3, p_body_bytes) n
                                      WHERE n >= 0
                                        AND (n >= pg_catalog.octet_length(b.octets)
                                             OR (pg_catalog.get_byte(b.octets, n) & 192) <> 128)) k)
                           ELSE e.body END,
                   'body_truncated', cut.truncated)), '{}')
          FROM history.messages m
          JOIN history.message_events e ON e.event_key = m.current_event_key AND e.tenant_key = p_tenant
          JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = p_tenant
          JOIN history.accounts a ON a.account_key = m.author_key AND a.tenant_key = p_tenant
          -- octet_length reads a toasted value's stored size, not the value
          CROSS JOIN LATERAL (SELECT pg_catalog.octet_length(e.body) > p_body_bytes AS truncated) cut
         WHERE m.message_key = ANY (p_messages) AND m.tenant_key = p_tenant);
END
$function$;

COMMENT ON FUNCTION history._messages_json(integer, bigint[], bigint, bigint[], integer) IS
    'Internal: messages'' returned fields by message key, text from canonical events, cut to p_body_bytes octets (flagged)';
REVOKE ALL ON FUNCTION history._messages_json(integer, bigint[], bigint, bigint[], integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION history._message_json(p_tenant integer, p_message bigint, p_agent bigint, p_requester_accounts bigint[],
                                                 p_body_bytes integer)
RETURNS jsonb
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN history._messages_json(p_tenant, ARRAY[p_message], p_agent, p_requester_accounts, p_body_bytes)
           -> p_message::text;
END
$function$;

COMMENT ON FUNCTION history._message_json(integer, bigint, bigint, bigint[], integer) IS
    'Internal: a message''s returned fields, text from canonical events, cut to p_body_bytes octets (flagged)';
REVOKE ALL ON FUNCTION history._message_json(integer, bigint, bigint, bigint[], integer) FROM PUBLIC;
