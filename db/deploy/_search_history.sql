-- Deploy history-search:_search_history to pg
-- requires: _search_history@v0.1.0
-- requires: session_evidence_settings
-- requires: query_period
-- requires: _score
-- The function lives in db/functions/_search_history.sql (reworked after 0.1.0:
-- the period the query names and its time words go to _score; reasons and
-- the audit carry the session, period and tells_time components).
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_history.sql

RESET ROLE;
COMMIT;
