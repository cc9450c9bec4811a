-- _index_tenant_message: (re)write the search projection row of a live
-- message from its current text, in the caller's transaction, analysed in its
-- conversation's language (_indexed_document: HS001 when the text cannot
-- be indexed, over PostgreSQL's tsvector size limit).
-- What _index_message does, with the message's tenant named in every
-- statement, as a value (a join condition on it is not enough for Citus to
-- route a subquery): on Citus (tenant_key is the distribution column) each is
-- then a single-shard statement, and a join of two distributed tables on
-- another column alone is refused.
CREATE OR REPLACE FUNCTION history._index_tenant_message(p_message_key bigint, p_body text, p_tenant_key integer)
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
      FROM history.messages m
      JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = p_tenant_key
     WHERE m.message_key = p_message_key AND m.tenant_key = p_tenant_key;
    v_document := history._indexed_document(p_body, v_language);

    INSERT INTO history.message_search_documents AS d
           (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
    SELECT m.message_key, m.tenant_key, m.message_id, m.conversation_key, m.author_key, m.sent_at,
           EXISTS (SELECT 1 FROM history.message_lineage l
                    WHERE l.message_key = m.message_key AND l.tenant_key = p_tenant_key),
           v_document
      FROM history.messages m
     WHERE m.message_key = p_message_key AND m.tenant_key = p_tenant_key
    ON CONFLICT (message_key, tenant_key) DO UPDATE SET document = excluded.document;
END
$function$;

COMMENT ON FUNCTION history._index_tenant_message(bigint, text, integer) IS
    'Internal: write the search projection row of a live message of a tenant';
REVOKE ALL ON FUNCTION history._index_tenant_message(bigint, text, integer) FROM PUBLIC;
