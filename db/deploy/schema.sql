-- Deploy history-search:schema to pg
-- requires: roles
BEGIN;

CREATE SCHEMA history AUTHORIZATION history_owner;
COMMENT ON SCHEMA history IS 'history-search: conversation-history search for AI agents';

-- Every function the owner creates here starts private; each file grants what it must.
-- (Per-schema defaults can only add privileges, so this one is database-wide.)
ALTER DEFAULT PRIVILEGES FOR ROLE history_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

GRANT USAGE ON SCHEMA history TO history_runtime, history_searcher, history_auditor, history_digest_verifier;

-- The audit digest's HMAC, computed in the core (no extension is installed or
-- required: see docs/decisions.md, "No extension").
SET LOCAL ROLE history_owner;
\ir ../functions/_hmac_sha256.sql
RESET ROLE;

COMMIT;
