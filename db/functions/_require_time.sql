-- _require_time: HS001 unless p_value is a finite timestamp.
CREATE OR REPLACE FUNCTION history._require_time(p_name text, p_value timestamptz)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    IF p_value IS NULL OR NOT isfinite(p_value) THEN
        RAISE EXCEPTION '% must be a finite timestamp, got %', p_name, coalesce(p_value::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_time(text, timestamptz) IS 'Internal: HS001 for a null or infinite time';
REVOKE ALL ON FUNCTION history._require_time(text, timestamptz) FROM PUBLIC;
