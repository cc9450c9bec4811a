-- Deploy history-search:_search_history to pg
-- The function lives in db/functions/_search_history.sql.
-- Reworked after 0.1.0: an over-long query is refused first; signals and query
-- languages come from what the run may see; the hits wait for _search_reveal;
-- the period the query names and its time words go to _score, and reasons and
-- the audit carry the session, period and tells_time components.
-- Reworked after v0.2.0: Every eligibility rule before the cap: when the ranking pass is capped with lineage or in-context removals, refill it with those rules applied inside the scan
-- Reworked after v0.3.0: Argument checks and the query's named people as stages (_check_search_arguments, _query_names)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_history.sql

RESET ROLE;
COMMIT;
