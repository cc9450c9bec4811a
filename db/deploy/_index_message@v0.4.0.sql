-- Deploy history-search:_index_message to pg
-- The function lives in db/functions/_index_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _index_message: (re)write the search projection row of a live message from
-- its current text, in the caller's transaction, analysed in its
-- conversation's language (_document_vector). HS001 when the text cannot
-- be indexed (over PostgreSQL's tsvector size limit).
CREATE OR REPLACE FUNCTION history._index_message(p_message_key bigint, p_body text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
-- to_tsvector's NOTICE for over-long words would echo nothing useful to the caller.
SET client_min_messages = warning
AS $function$
DECLARE
    v_language regconfig;
    v_document tsvector;
BEGIN
    SELECT c.language INTO v_language
      FROM history.messages m JOIN history.conversations c ON c.conversation_key = m.conversation_key
     WHERE m.message_key = p_message_key;
    BEGIN
        v_document := history._document_vector(p_body, v_language);
    EXCEPTION WHEN program_limit_exceeded THEN
        RAISE EXCEPTION 'message body of % characters is too large to index', length(p_body)
            USING ERRCODE = 'HS001', HINT = 'Split the text into several messages.';
    END;

    INSERT INTO history.message_search_documents AS d
           (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
    SELECT m.message_key, m.tenant_key, m.message_id, m.conversation_key, m.author_key, m.sent_at,
           EXISTS (SELECT 1 FROM history.message_lineage l WHERE l.message_key = m.message_key),
           v_document
      FROM history.messages m
     WHERE m.message_key = p_message_key
    ON CONFLICT (message_key, tenant_key) DO UPDATE SET document = excluded.document;
END
$function$;

COMMENT ON FUNCTION history._index_message(bigint, text) IS 'Internal: write the search projection row of a live message';
REVOKE ALL ON FUNCTION history._index_message(bigint, text) FROM PUBLIC;

RESET ROLE;
COMMIT;
