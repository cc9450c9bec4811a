-- Deploy history-search:_ranking_pass to pg
-- requires: search_stage_types _newest_matches _ineligible_by _member_windows _lineage_blocked _score
-- The function lives in db/functions/_ranking_pass.sql.
-- Reworked after v0.3.0: Citus: tenant filters in _ranking_pass (the tenant named in every statement on its rows)
-- Reworked after v0.4.0: The window stage: the first 30 matches re-ranked by their windows (history._window_scores)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_ranking_pass.sql

RESET ROLE;
COMMIT;
