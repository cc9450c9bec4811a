-- _require_id: HS001 unless p_value is a usable text id (not null, not blank).
CREATE OR REPLACE FUNCTION history._require_id(p_name text, p_value text)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    IF p_value IS NULL OR btrim(p_value) = '' THEN
        RAISE EXCEPTION '% must be a non-empty id, got %', p_name, coalesce(quote_literal(p_value), 'NULL')
            USING ERRCODE = 'HS001';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_id(text, text) IS 'Internal: HS001 for a null or blank id';
REVOKE ALL ON FUNCTION history._require_id(text, text) FROM PUBLIC;
