-- _hmac_sha256: HMAC-SHA-256 (RFC 2104) of p_message under p_key, built on
-- pg_catalog.sha256() (PostgreSQL 11+). It gives the audit digest the same
-- bytes pgcrypto's hmac(p_message, p_key, 'sha256') gives, without installing
-- pgcrypto: a database that already has pgcrypto, in any schema, is left alone.
-- No backslash in any literal (a caller's standard_conforming_strings = off).
CREATE OR REPLACE FUNCTION history._hmac_sha256(p_message bytea, p_key bytea)
RETURNS bytea
LANGUAGE plpgsql
IMMUTABLE
STRICT
PARALLEL SAFE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    -- A key longer than SHA-256's 64-byte block is replaced by its hash.
    v_key  bytea := CASE WHEN pg_catalog.length(p_key) > 64 THEN pg_catalog.sha256(p_key) ELSE p_key END;
    -- The key zero-padded to 64 bytes, XOR 0x36 (inner) and XOR 0x5c (outer):
    -- start from the pads alone and XOR the key's bytes in.
    v_ipad bytea := pg_catalog.decode(pg_catalog.repeat('36', 64), 'hex');
    v_opad bytea := pg_catalog.decode(pg_catalog.repeat('5c', 64), 'hex');
BEGIN
    FOR i IN 0 .. pg_catalog.length(v_key) - 1 LOOP
        v_ipad := pg_catalog.set_byte(v_ipad, i, pg_catalog.get_byte(v_key, i) # 54);  -- 0x36
        v_opad := pg_catalog.set_byte(v_opad, i, pg_catalog.get_byte(v_key, i) # 92);  -- 0x5c
    END LOOP;
    RETURN pg_catalog.sha256(v_opad || pg_catalog.sha256(v_ipad || p_message));
END
$function$;

COMMENT ON FUNCTION history._hmac_sha256(bytea, bytea) IS 'Internal: HMAC-SHA-256 of the audit digest (same bytes as pgcrypto''s hmac(..., ''sha256''))';
REVOKE ALL ON FUNCTION history._hmac_sha256(bytea, bytea) FROM PUBLIC;
