-- Verify history-search:types on pg
BEGIN;

SELECT (NULL::history.search_hit).message_id, (NULL::history.search_hit).reasons, (NULL::history.search_hit).before;
SELECT (NULL::history.search_result).status, (NULL::history.search_result).hits;
SELECT (NULL::history._ranked_candidate).total;

ROLLBACK;
