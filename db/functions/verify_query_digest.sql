-- verify_query_digest: does this query text produce the digest recorded in
-- the search event? The text is compared, never kept. Executable only by
-- history_digest_verifier, granted to a person explicitly: with it anyone
-- holding an event id can test guesses, and a short query is guessed from a
-- dictionary, so an auditor of the views does not get it by default.
CREATE OR REPLACE FUNCTION history.verify_query_digest(p_event_id uuid, p_query text)
RETURNS boolean
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_digest bytea;
    v_secret bytea;
BEGIN
    IF p_event_id IS NULL THEN
        RAISE EXCEPTION 'p_event_id must be a search event id, got NULL' USING ERRCODE = 'HS001';
    END IF;
    IF p_query IS NULL THEN
        RAISE EXCEPTION 'p_query must be text, got NULL' USING ERRCODE = 'HS001';
    END IF;
    SELECT e.query_digest, k.secret INTO v_digest, v_secret
      FROM history.conversation_search_events e
      JOIN history.query_digest_keys k ON k.digest_key_id = e.digest_key_id
     WHERE e.search_event_id = p_event_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown search event %', p_event_id USING ERRCODE = 'HS003';
    END IF;
    RETURN history._hmac_sha256(convert_to(history._normalise_query(p_query), 'UTF8'), v_secret) = v_digest;
END
$function$;

COMMENT ON FUNCTION history.verify_query_digest(uuid, text) IS
    'Auditor check: true when the query text produced the search event''s keyed digest';
REVOKE ALL ON FUNCTION history.verify_query_digest(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.verify_query_digest(uuid, text) TO history_digest_verifier;
