-- Verify history-search:search_stage_types on pg
BEGIN;

SELECT (NULL::history._hit_neighbours).before, (NULL::history._admitted_hit).rank, (NULL::history._admission).hits,
       (NULL::history._search_scope).eligible_windows, (NULL::history._ranking_pass).ranked,
       (NULL::history._counting_pass).capped;

ROLLBACK;
