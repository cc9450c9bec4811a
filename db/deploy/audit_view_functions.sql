-- Deploy history-search:audit_view_functions to pg
-- requires: audit_views_by_tenant status_view _search_documents_estimate
--
-- The rows of the auditor's three views, each from a SECURITY DEFINER function
-- executable by history_auditor: on Citus the views read through them (the
-- owner's connections reach the workers' shards, an auditor's login cannot);
-- `history-search distribute` puts those definitions in place there. On one
-- node the views keep their own queries. The functions live in db/functions/.
-- Reworked after v0.6.0: _status_rows: the projection's estimate from _search_documents_estimate (on Citus the shards', not the coordinator's empty shell)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_audit_rows.sql
\ir ../functions/_search_audit_messages_rows.sql
\ir ../functions/_status_rows.sql

RESET ROLE;
COMMIT;
