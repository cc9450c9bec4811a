-- _message_json: a message as search returns it, its body loaded from its
-- latest canonical event; speaker_role relative to the run's agent and
-- requester (with the requester's linked accounts).
-- PL/pgSQL rather than SQL so that its plan is cached for the session:
-- search_history calls it once per returned message.
CREATE OR REPLACE FUNCTION history._message_json(p_message bigint, p_agent bigint, p_requester_accounts bigint[])
RETURNS jsonb
LANGUAGE plpgsql
STABLE
AS $function$
BEGIN
    RETURN (
        SELECT pg_catalog.jsonb_build_object(
                   'message_id', m.message_id,
                   'conversation_id', c.conversation_id,
                   'sent_at', m.sent_at,
                   'speaker_id', a.account_id,
                   'speaker_role', CASE WHEN m.author_key = ANY (p_requester_accounts) THEN 'requester'
                                        WHEN m.author_key = p_agent THEN 'you'
                                        ELSE 'other' END,
                   'body', e.body)
          FROM history.messages m
          JOIN history.message_events e ON e.event_key = m.current_event_key
          JOIN history.conversations c ON c.conversation_key = m.conversation_key
          JOIN history.accounts a ON a.account_key = m.author_key
         WHERE m.message_key = p_message);
END
$function$;

COMMENT ON FUNCTION history._message_json(bigint, bigint, bigint[]) IS
    'Internal: a message''s returned fields, text from canonical events';
REVOKE ALL ON FUNCTION history._message_json(bigint, bigint, bigint[]) FROM PUBLIC;
