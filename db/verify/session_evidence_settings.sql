-- Verify history-search:session_evidence_settings on pg
BEGIN;

SELECT session_weight, session_gap FROM history.search_settings WHERE false;
SELECT (NULL::history._ranked_candidate).session;

ROLLBACK;
