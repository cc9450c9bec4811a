-- _indexed_document: a message's search document (_document_vector in its
-- conversation's language), or HS001 naming the text's length when the text
-- cannot be indexed (over PostgreSQL's tsvector size limit). Its exception
-- block is a subtransaction: callers compute the document before any write,
-- because on Citus a subtransaction after a write is a savepoint on the worker.
CREATE OR REPLACE FUNCTION history._indexed_document(p_body text, p_language regconfig)
RETURNS tsvector
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
-- to_tsvector's NOTICE for over-long words would echo nothing useful to the caller.
SET client_min_messages = warning
AS $function$
BEGIN
    RETURN history._document_vector(p_body, p_language);
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE EXCEPTION 'message body of % characters is too large to index', length(p_body)
        USING ERRCODE = 'HS001', HINT = 'Split the text into several messages.';
END
$function$;

COMMENT ON FUNCTION history._indexed_document(text, regconfig) IS
    'Internal: a message''s search document, HS001 when its text is too large to index';
REVOKE ALL ON FUNCTION history._indexed_document(text, regconfig) FROM PUBLIC;
