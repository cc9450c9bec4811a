-- _status_rows: history.status' row, computed as the view's owner.
-- The view reads its tables with its owner's rights, but on Citus the workers'
-- shards are read over connections opened as the session's role, which an
-- auditor's login cannot pass; run as the owner, this function's reads reach
-- the shards over the owner's connections. `history-search distribute`
-- redefines history.status on a Citus coordinator as SELECT * FROM this function;
-- on one node the view keeps its own query, so a filter on one of its columns
-- still reaches the tables' indexes. The query is the view's, column for column
-- (but an OFFSET, and the projection's estimate, read through
-- _search_documents_estimate, which on one node reads what the view reads):
-- a change of one is a change of the other.
CREATE OR REPLACE FUNCTION history._status_rows()
RETURNS TABLE (
    release text,
    observed_at timestamp with time zone,
    open_runs bigint,
    oldest_open_run_started_at timestamp with time zone,
    oldest_open_run_age interval,
    searches_last_day bigint,
    budget_exhausted_last_day bigint,
    searches_by_hour jsonb,
    oldest_search_at timestamp with time zone,
    reindex_running boolean,
    reindex_started_at timestamp with time zone,
    reindex_finished_at timestamp with time zone,
    reindex_rows_done bigint,
    reindex_last_message_key bigint,
    search_documents_estimate bigint,
    reindex_percent numeric
)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
SELECT history.schema_release() AS release,
       pg_catalog.now() AS observed_at,
       o.open_runs,
       o.oldest_open_run_started_at,
       pg_catalog.now() OPERATOR(pg_catalog.-) o.oldest_open_run_started_at AS oldest_open_run_age,
       d.searches_last_day,
       d.budget_exhausted_last_day,
       h.searches_by_hour,
       (SELECT pg_catalog.min(e.searched_at) FROM history.conversation_search_events e) AS oldest_search_at,
       (p.started_at IS NOT NULL AND p.finished_at IS NULL) AS reindex_running,
       p.started_at  AS reindex_started_at,
       p.finished_at AS reindex_finished_at,
       p.rows_done   AS reindex_rows_done,
       p.last_message_key AS reindex_last_message_key,
       -- The planner's estimate (on one node the view reads pg_class.reltuples
       -- itself; on Citus the shell's is 0 and the shards' are summed).
       t.documents_estimate AS search_documents_estimate,
       CASE WHEN p.started_at IS NULL THEN NULL
            WHEN p.finished_at IS NOT NULL THEN 100.0
            ELSE pg_catalog.round(LEAST(100.0, 100.0 * p.rows_done / GREATEST(t.documents_estimate, 1)), 1)
       END AS reindex_percent
  FROM (SELECT pg_catalog.count(*) AS open_runs, pg_catalog.min(r.started_at) AS oldest_open_run_started_at
          FROM history.runs r WHERE r.ended_at IS NULL) o
 CROSS JOIN (SELECT pg_catalog.count(*) AS searches_last_day,
                    pg_catalog.count(*) FILTER (WHERE e.status = 'search_budget_exhausted') AS budget_exhausted_last_day
               FROM history.conversation_search_events e
              WHERE e.searched_at >= pg_catalog.now() OPERATOR(pg_catalog.-) interval '24 hours') d
 CROSS JOIN (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                        'hour', pg_catalog.to_char(x.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'searches', x.searches, 'budget_exhausted', x.exhausted) ORDER BY x.hour) AS searches_by_hour
               FROM (SELECT g.hour,
                            pg_catalog.count(e.event_key) AS searches,
                            pg_catalog.count(e.event_key) FILTER (WHERE e.status = 'search_budget_exhausted') AS exhausted
                       FROM pg_catalog.generate_series(pg_catalog.date_trunc('hour', pg_catalog.now()) OPERATOR(pg_catalog.-) interval '23 hours',
                                                       pg_catalog.date_trunc('hour', pg_catalog.now()), interval '1 hour') g(hour)
                       LEFT JOIN history.conversation_search_events e
                              ON e.searched_at >= g.hour AND e.searched_at < g.hour OPERATOR(pg_catalog.+) interval '1 hour'
                      GROUP BY g.hour) x) h
 CROSS JOIN (SELECT history._search_documents_estimate() AS documents_estimate) t
  -- OFFSET 0: on Citus the reference table is read on its own, not joined on
  -- the coordinator over a connection to itself as the owner (who may not log in there).
  LEFT JOIN (SELECT * FROM history.reindex_progress OFFSET 0) p ON true
$function$;

COMMENT ON FUNCTION history._status_rows() IS 'history-search: the rows of history.status as its owner reads them (what the view reads on Citus)';
GRANT EXECUTE ON FUNCTION history._status_rows() TO history_auditor;
