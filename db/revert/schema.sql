-- Revert history-search:schema from pg
-- Drops only what deploy/schema.sql created (no extension: it installs none).
BEGIN;

ALTER DEFAULT PRIVILEGES FOR ROLE history_owner GRANT EXECUTE ON FUNCTIONS TO PUBLIC;
DROP FUNCTION history._hmac_sha256(bytea, bytea);
DROP SCHEMA history;

COMMIT;
