-- search_history: the model-facing search of one run, as a
-- committing procedure: it runs the search (history._search_history, which
-- writes the audit row, evidence and budget charge and keeps the hits aside),
-- commits, and only then takes the hits (history._search_reveal, which
-- refuses while the search's transaction is uncommitted and reveals only
-- once its commit is flushed to the WAL; if WAL that others inserted since
-- is not flushed yet, the procedure commits once more, synchronously, and
-- asks again). So no caller ever holds a hit whose audit could still be
-- undone or lost in a crash, and no caller keeps the search's locks beyond
-- the call.
--
-- PostgreSQL allows COMMIT only in a procedure that is SECURITY INVOKER, has
-- no SET clause and is CALLed outside any transaction block, function or
-- exception handler. So this body runs with the caller's search_path: every
-- name in it is schema-qualified. Called anywhere else (inside BEGIN …, an
-- exception handler, a function, or beside other statements in one query
-- string) it fails with 2D000 at its first COMMIT, before any search is done.
CREATE OR REPLACE PROCEDURE history.search_history(
    p_run     uuid,
    p_query   text,
    p_speaker text        DEFAULT 'anyone',
    p_after   timestamptz DEFAULT NULL,
    p_before  timestamptz DEFAULT NULL,
    p_limit   integer     DEFAULT 8,
    INOUT result history.search_result DEFAULT NULL
)
LANGUAGE plpgsql
SECURITY INVOKER
AS $procedure$
DECLARE
    v_event uuid;
BEGIN
    -- Fail before any work where COMMIT is not allowed (a transaction block,
    -- an exception handler, a function): 2D000, "invalid transaction termination".
    -- At the top level it commits only what the COMMIT after the search would.
    COMMIT;
    -- The reveal compiled now, in the search's transaction: a session's first
    -- compile reads pg_proc and may prune its pages, WAL that the search's
    -- synchronous commit flushes; compiled after it, the reveal would need a
    -- second commit for that WAL (it defers for any WAL inserted before it began).
    PERFORM history._search_reveal(NULL, NULL, NULL);
    result := history._search_history(p_run, p_query, p_speaker, p_after, p_before, p_limit);
    v_event := result.search_event_id;
    COMMIT;
    result := history._search_reveal(p_run, v_event, p_query, p_defer => true);
    -- NULL: WAL inserted since the search's commit (other sessions' work) is
    -- not flushed yet. This commit, synchronous whatever the caller set,
    -- flushes it, and the reveal then has nothing to wait for.
    IF result IS NULL THEN
        PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
        COMMIT;
        result := history._search_reveal(p_run, v_event, p_query);
    END IF;
END
$procedure$;

COMMENT ON PROCEDURE history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result) IS
    'Search a run''s eligible history (OR of the query''s terms), ranked, with neighbours, budget and audit; commits the audit, then returns the hits';
REVOKE ALL ON PROCEDURE history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result) FROM PUBLIC;
GRANT EXECUTE ON PROCEDURE history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result)
    TO history_searcher, history_runtime;
