-- Deploy history-search:status_view to pg
-- requires: run_tables reindex_documents release
--
-- history.status: what the system is doing, in one row, for the owner and
-- auditors: the release deployed, open runs and the oldest one's age, searches
-- and budget exhaustion per hour over the last day, the oldest audit row
-- (what purge has left), and the re-index's progress. Counts, times and
-- keys: never message or query text, never a run token.
-- The view runs with the owner's rights on the tables; a function it calls is
-- checked against the reader, so the auditor gets schema_release() (a version
-- string) too.
BEGIN;
SET LOCAL ROLE history_owner;

CREATE VIEW history.status AS
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
       -- The planner's estimate (pg_class.reltuples): counting tens of millions
       -- of rows for a status line would take seconds.
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
 CROSS JOIN (SELECT GREATEST(c.reltuples, 0)::bigint AS documents_estimate
               FROM pg_catalog.pg_class c WHERE c.oid = 'history.message_search_documents'::regclass) t
  LEFT JOIN history.reindex_progress p ON true;
COMMENT ON VIEW history.status IS
    'What the system is doing: release, open runs, searches and budget exhaustion per hour (last 24 h), oldest audit, re-index progress; no text';

REVOKE ALL ON history.status FROM PUBLIC;
GRANT SELECT ON history.status TO history_auditor;
GRANT EXECUTE ON FUNCTION history.schema_release() TO history_auditor;

RESET ROLE;
COMMIT;
