-- Errors about a run name it by history._run_label, never by its token (the
-- run's credential): unknown and ended runs, through every caller of the lock.
BEGIN;
SELECT plan(16);

SELECT history.upsert_account('e-bot', 'agent');
SELECT history.upsert_account('e-ann', 'person');
SELECT history.upsert_conversation('e-dm', 'direct');
SELECT history.add_member('e-dm', 'e-bot', '2026-01-01');
SELECT history.add_member('e-dm', 'e-ann', '2026-01-01');
SELECT history.post_message('e-ask', 'e-dm', 'e-ann', 'where is the launch plan', '2026-02-01');
CREATE TEMP TABLE t_runs ON COMMIT DROP AS
SELECT history.begin_run('e-bot', 'e-dm', 'e-ann', 'e-ask') AS ended,
       '7f1c2b9e-5a40-4c61-9d3e-0b8a6f2e4d15'::uuid AS unknown;
SELECT history.end_run(ended) FROM t_runs;

-- Message, detail and hint of the error a statement raises (NULL if none).
CREATE FUNCTION pg_temp.error_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_message text; v_detail text; v_hint text; v_state text;
BEGIN
    EXECUTE p_sql;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
                            v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
    RETURN concat_ws(' | ', v_state, v_message, v_detail, v_hint);
END $$;

SELECT is(history._run_label('00000000-0000-0000-0000-000000000000'), '12b9377cbe7e',
          'a run''s label is the first 12 hex digits of SHA-256 of its token''s text');
SELECT isnt(history._run_label(ended), history._run_label(unknown), 'two tokens, two labels') FROM t_runs;

-- An unknown run.
SELECT is(split_part(pg_temp.error_of(format('SELECT history._search_history(%L, %L)', unknown, 'launch')), ' | ', 2),
          'unknown run ' || history._run_label(unknown), 'a search of an unknown run: HS002 naming its label') FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history._search_history(%L, %L)', unknown, 'launch')),
               '%' || unknown || '%', 'a search of an unknown run: no token in the error') FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history.end_run(%L)', unknown)),
               '%' || unknown || '%', 'end_run of an unknown run: no token in the error') FROM t_runs;
SELECT alike(pg_temp.error_of(format('SELECT history.end_run(%L)', unknown)),
            'HS002 | unknown run ' || history._run_label(unknown) || '%', 'end_run of an unknown run: HS002 naming its label')
  FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history.record_reply(%L, %L, %L, %L)', unknown, 'e-re', 'here', '2026-02-02')),
               '%' || unknown || '%', 'record_reply of an unknown run: no token in the error') FROM t_runs;

-- An ended run.
SELECT is(split_part(pg_temp.error_of(format('SELECT history._search_history(%L, %L)', ended, 'launch')), ' | ', 2),
          'run ' || history._run_label(ended) || ' has ended', 'a search of an ended run: HS002 naming its label') FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history._search_history(%L, %L)', ended, 'launch')),
               '%' || ended || '%', 'a search of an ended run: no token in the error') FROM t_runs;
SELECT alike(pg_temp.error_of(format('SELECT history.end_run(%L)', ended)),
            'HS002 | run ' || history._run_label(ended) || ' has ended%', 'ending an ended run: HS002 naming its label')
  FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history.end_run(%L)', ended)),
               '%' || ended || '%', 'ending an ended run: no token in the error') FROM t_runs;
SELECT unalike(pg_temp.error_of(format('SELECT history.record_reply(%L, %L, %L, %L)', ended, 'e-re', 'here', '2026-02-02')),
               '%' || ended || '%', 'record_reply of an ended run: no token in the error') FROM t_runs;
SELECT alike(pg_temp.error_of(format('SELECT history.record_reply(%L, %L, %L, %L)', ended, 'e-re', 'here', '2026-02-02')),
            'HS002 | run ' || history._run_label(ended) || ' has ended%', 'record_reply of an ended run: HS002 naming its label')
  FROM t_runs;
SELECT alike(pg_temp.error_of(format('SELECT * FROM history.check_delivery(%L)', ended)),
            'HS002 | run ' || history._run_label(ended) || ' has ended%', 'check_delivery of an ended run: HS002 naming its label')
  FROM t_runs;
SELECT alike(pg_temp.error_of(format('SELECT * FROM history.check_delivery(%L)', unknown)),
            'HS002 | unknown run ' || history._run_label(unknown) || '%', 'check_delivery of an unknown run: HS002 naming its label')
  FROM t_runs;
-- The label is no capability: no client role may compute it through the schema.
SELECT ok(NOT has_function_privilege('history_searcher', 'history._run_label(uuid)', 'execute')
          AND NOT has_function_privilege('history_runtime', 'history._run_label(uuid)', 'execute'),
          '_run_label is the owner''s');

SELECT * FROM finish();
ROLLBACK;
