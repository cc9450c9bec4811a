-- Verify history-search:window_evidence_settings on pg
BEGIN;

SELECT window_coverage_weight, feedback_weight FROM history.search_settings WHERE false;
SELECT (NULL::history._ranked_candidate).window_coverage, (NULL::history._ranked_candidate).feedback;
SELECT (NULL::history._ranking_pass).neighbours;

ROLLBACK;
