-- _normalise_query: the form of a query text that the audit digest signs:
-- Unicode NFC, lower case, white space runs folded to one space, trimmed.
-- No backslash in any literal: a caller's standard_conforming_strings = off
-- would turn '\s+' into 's+' (and the digest of every query with an 's').
CREATE OR REPLACE FUNCTION history._normalise_query(p_query text)
RETURNS text
LANGUAGE sql
STABLE
AS $function$
    SELECT pg_catalog.lower(pg_catalog.btrim(
               pg_catalog.regexp_replace(
                   -- normalize() needs a UTF8 database; other encodings sign the text as it is.
                   CASE WHEN pg_catalog.getdatabaseencoding() = 'UTF8' THEN pg_catalog.normalize(p_query, 'NFC') ELSE p_query END,
                   '[[:space:]]+', ' ', 'g')))
$function$;

COMMENT ON FUNCTION history._normalise_query(text) IS 'Internal: normal form of a query text for its digest';
REVOKE ALL ON FUNCTION history._normalise_query(text) FROM PUBLIC;
