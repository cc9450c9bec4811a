-- _candidate_strategy: how history._newest_matches finds the newest p_count
-- matches, chosen from estimates alone (a pure function: the same estimates,
-- the same answer, so tests pin the choice). The estimates: p_matches, the
-- planner's count of messages matching the query (M); p_total, the rows of
-- the projection (T); p_conversations, how many conversations are listed
-- (NULL: all of an agent's, too many to list); p_listed_rows, the rows they
-- hold (S, history._listed_rows); p_hours, the hours from the oldest row to
-- the newest. The answer is 'text', 'walk' or 'slice' (_newest_matches says
-- what each reads), or NULL when the choice needs p_listed_rows and p_hours
-- and they were not given: the caller computes them only then.
--
-- Each strategy's cost is the rows it reads or fetches, by the estimates;
-- an index posting or time key costs a fraction of a fetched row (measured at
-- 10M messages: a slice of 105 days, two million time postings, took 46 ms in
-- the index; a list holding two big channels, S = 2 000 000, took 52 ms in
-- the text index for M = 40 000 where slices took 21; ANDed bitmaps of
-- 115 000 and 54 000 entries took 30 ms where slices took 110; one slice over
-- a 20-conversation list's weeks took 25 ms where the whole search without
-- weeks took 8).
CREATE OR REPLACE FUNCTION history._candidate_strategy(
    p_count integer, p_matches float8, p_total float8, p_conversations integer,
    p_listed_rows float8 DEFAULT NULL, p_hours float8 DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    -- At most this many matches per wanted row: the text index then sort (the
    -- planner's estimate for any term rarer than its most common ones is below).
    c_text_matches_per_row CONSTANT float8 := 20;
    -- Lists longer than this are not estimated: slices.
    c_max_estimated_list   CONSTANT integer := 5000;
    -- Lists up to this long are tested inside the text index.
    c_max_short_list       CONSTANT integer := 250;
    -- A walk descends each listed conversation's index: at most this many.
    c_max_walk_list        CONSTANT integer := 1000;
    c_walk_descent_rows    CONSTANT float8 := 10;   -- a descent, in fetched rows
    c_posting_share        CONSTANT float8 := 50;   -- postings (compressed) per fetched row
    c_bitmap_share         CONSTANT float8 := 4;    -- bitmap entries per fetched row
    c_week_key_rows        CONSTANT float8 := 20;   -- a (conversation, week) key, in fetched rows
    c_slice_overshoot      CONSTANT float8 := 1.25; -- slices fetch this share over p_count
    c_slice_scans_rows     CONSTANT float8 := 200;  -- the few scans a slice walk makes
    c_hours_per_week       CONSTANT float8 := 168;
    v_short  boolean := p_conversations <= c_max_short_list;
    v_text   float8;
    v_walk   float8;
    v_slice  float8;
BEGIN
    IF p_matches <= c_text_matches_per_row * p_count THEN
        RETURN 'text';
    ELSIF p_conversations IS NULL OR p_conversations > c_max_estimated_list THEN
        RETURN 'slice';
    ELSIF p_listed_rows IS NULL OR p_hours IS NULL THEN
        RETURN NULL;
    END IF;
    -- text: the list's matches, and the M + S postings (short list, inside
    -- the text index) or bitmap entries (long list, ANDed) it intersects
    v_text := p_matches * p_listed_rows / p_total
              + (p_matches + p_listed_rows) / CASE WHEN v_short THEN c_posting_share ELSE c_bitmap_share END;
    -- walk: about p_count / density rows, at most S, and a descent per conversation
    v_walk := CASE WHEN p_conversations <= c_max_walk_list
                   THEN least(p_listed_rows, p_count * p_total / p_matches) + c_walk_descent_rows * p_conversations
                   ELSE 'Infinity' END;
    -- slices: the list's matches in the hours that hold p_count (a long
    -- list: every conversation's there), and those hours' time postings, or
    -- for a short list its weeks' postings, matches and keys if fewer
    v_slice := CASE WHEN v_short THEN c_slice_overshoot * p_count ELSE p_count * p_total / p_listed_rows END
               + least(p_count * p_total * p_total / (p_matches * p_listed_rows) / c_posting_share,
                       CASE WHEN v_short
                            THEN c_slice_overshoot * p_count * p_total / p_matches / c_posting_share
                                 + (p_listed_rows / c_posting_share + p_matches * p_listed_rows / p_total)
                                   * c_hours_per_week / p_hours
                                 + c_week_key_rows * p_conversations
                                   * (c_slice_overshoot * p_count * p_total / (p_matches * p_listed_rows)
                                      * p_hours / c_hours_per_week + 1)
                            ELSE 'Infinity' END)
               + c_slice_scans_rows;
    RETURN CASE WHEN v_slice < least(v_text, v_walk) THEN 'slice'
                WHEN v_walk < v_text THEN 'walk' ELSE 'text' END;
END
$function$;

COMMENT ON FUNCTION history._candidate_strategy(integer, float8, float8, integer, float8, float8) IS
    'Internal: the strategy _newest_matches uses for given estimates (text, walk or slice; NULL: needs the list''s estimates)';
REVOKE ALL ON FUNCTION history._candidate_strategy(integer, float8, float8, integer, float8, float8) FROM PUBLIC;
