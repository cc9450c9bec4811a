-- Deploy history-search:_window_scores to pg
-- requires: window_evidence_settings
-- The function lives in db/functions/_window_scores.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_window_scores.sql

RESET ROLE;
COMMIT;
