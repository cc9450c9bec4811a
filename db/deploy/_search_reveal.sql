-- Deploy history-search:_search_reveal to pg
-- requires: search_reveals
-- requires: _query_analysis
-- requires: _run_label
-- The function lives in db/functions/_search_reveal.sql. It gained p_defer: the earlier signature goes first.
-- Reworked after v0.2.0: The reveal waits only for WAL up to the search's commit: the flush target is taken before the reveal reads anything
-- Reworked after v0.3.0: One refusal for a run that has ended or a search with no hits waiting, wherever the hits were missed
-- Reworked after v0.5.0: p_defer: passed on to _reveal_in_tenant
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._search_reveal(uuid, uuid, text);
\ir ../functions/_search_reveal.sql

RESET ROLE;
COMMIT;
