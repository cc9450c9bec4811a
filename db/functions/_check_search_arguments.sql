-- _check_search_arguments: the search's arguments, checked before any other
-- work (an over-long query would cost its length in every step); returns
-- the effective limit (8 when NULL, at most 20). Errors are HS001 and name
-- the bad value, except the query's text, which is never echoed.
CREATE OR REPLACE FUNCTION history._check_search_arguments(
    p_query text, p_speaker text, p_after timestamptz, p_before timestamptz, p_limit integer,
    p_max_query_chars integer)
RETURNS integer
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_limit integer := coalesce(p_limit, 8);
BEGIN
    IF p_query IS NULL THEN
        RAISE EXCEPTION 'p_query must be text, got NULL' USING ERRCODE = 'HS001', HINT = 'Pass '''' for an empty search.';
    END IF;
    -- A text has at most as many characters as bytes, so most need no count.
    IF octet_length(p_query) > p_max_query_chars AND length(p_query) > p_max_query_chars THEN
        RAISE EXCEPTION 'p_query is % characters long, over the maximum of %', length(p_query), p_max_query_chars
            USING ERRCODE = 'HS001', HINT = 'Shorten the query (search_settings.max_query_chars).';
    END IF;
    IF coalesce(p_speaker, 'anyone') NOT IN ('anyone', 'requester', 'you') THEN
        RAISE EXCEPTION 'invalid speaker %', quote_literal(left(p_speaker, 64))
            USING ERRCODE = 'HS001', HINT = 'p_speaker is ''anyone'', ''requester'' or ''you''.';
    END IF;
    IF v_limit < 1 THEN
        RAISE EXCEPTION 'p_limit must be at least 1, got %', v_limit USING ERRCODE = 'HS001';
    END IF;
    IF p_after > p_before THEN
        RAISE EXCEPTION 'p_after % is later than p_before %', p_after, p_before USING ERRCODE = 'HS001';
    END IF;
    RETURN least(v_limit, 20);
END
$function$;

COMMENT ON FUNCTION history._check_search_arguments(text, text, timestamptz, timestamptz, integer, integer) IS
    'Internal: the search''s arguments checked (HS001 naming the bad value); returns the effective limit';
REVOKE ALL ON FUNCTION history._check_search_arguments(text, text, timestamptz, timestamptz, integer, integer) FROM PUBLIC;
