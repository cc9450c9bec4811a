-- _window_scores: the window stage of the ranking (docs/decisions.md,
-- "Ranking"). A hit is returned with up to two eligible messages each side,
-- so the first matches are also scored by that window's text. In: the first
-- matches by history._score's total, best first (p_keys ... p_documents),
-- the documents of the eligible neighbours of the first p_reach of them
-- (p_window_documents, each with its match's key in p_window_of), the query
-- terms and their rarity over the eligible candidates (_score's
-- term_rarity). Per match:
--
--   window_coverage = window_coverage_weight · Σ rarity of the query terms in
--                     the match or its neighbours / Σ rarity of all the query
--                     terms (the first p_reach matches only; 0 for the rest)
--   feedback        = feedback_weight · es(d) / the best es: with total' =
--                     total + window_coverage, the two first matches by
--                     total' lend their windows' words: each word's share of
--                     a window's positions, times that match's total' /
--                     the first's, summed; times its rarity over p_keys'
--                     documents (in 2 or more, not a query term); the five
--                     heaviest (ties: the word, in byte order) are the
--                     expansion, and es(d) sums the weights of those d contains.
--
-- Every addend is rounded to a multiple of 2^-32, as in _score: sums do not
-- depend on the order rows come in. Only eligible messages are read, so a
-- message the audience may not see moves no score (SPEC §3).
CREATE OR REPLACE FUNCTION history._window_scores(
    p_keys             bigint[],
    p_ids              text[],
    p_sent_at          timestamptz[],
    p_totals           float8[],
    p_documents        tsvector[],
    p_window_of        bigint[],
    p_window_documents tsvector[],
    p_terms            text[],
    p_term_rarity      float8[],
    p_settings         history.search_settings,
    p_reach            integer)
RETURNS TABLE (message_key bigint, window_coverage float8, feedback float8)
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
-- Planned once per session (a SQL function's body is planned at every call):
-- the inputs are arrays, there is nothing for a custom plan to learn.
SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
    RETURN QUERY
    WITH match AS MATERIALIZED (
        SELECT m.message_key, m.message_id COLLATE "C" AS message_id, m.sent_at, m.total, m.document, m.ord
          FROM unnest(p_keys, p_ids, p_sent_at, p_totals, p_documents) WITH ORDINALITY
               AS m(message_key, message_id, sent_at, total, document, ord)
    ), term AS (
        SELECT DISTINCT t.lexeme, t.rarity
          FROM unnest(p_terms, p_term_rarity) t(lexeme, rarity)
         WHERE t.rarity > 0
    ), window_document AS MATERIALIZED (
        -- the first p_reach matches' windows: the match itself and its neighbours
        SELECT m.message_key AS match_key, m.document FROM match m WHERE m.ord <= p_reach
        UNION ALL
        SELECT w.match_key, w.document FROM unnest(p_window_of, p_window_documents) w(match_key, document)
    ), window_word AS MATERIALIZED (
        SELECT w.match_key, u.lexeme, coalesce(cardinality(u.positions), 1) AS positions
          FROM window_document w CROSS JOIN LATERAL unnest(w.document) u
    ), coverage AS (
        SELECT c.match_key,
               p_settings.window_coverage_weight * sum(c.rarity) / (SELECT sum(t.rarity) FROM term t) AS window_coverage
          FROM (SELECT DISTINCT w.match_key, t.lexeme, t.rarity
                  FROM window_word w JOIN term t ON t.lexeme = w.lexeme) c
         GROUP BY c.match_key
    ), covered AS MATERIALIZED (
        SELECT m.message_key, m.message_id, m.sent_at, m.document,
               coalesce(c.window_coverage, 0) AS window_coverage,
               m.total + coalesce(c.window_coverage, 0) AS total
          FROM match m LEFT JOIN coverage c ON c.match_key = m.message_key
    ), lender AS (
        -- the two first matches after window coverage; their windows are known (they are among the first p_reach)
        SELECT c.message_key, c.total / nullif(first_value(c.total) OVER (ORDER BY c.total DESC, c.sent_at DESC, c.message_id), 0) AS lends
          FROM covered c
         ORDER BY c.total DESC, c.sent_at DESC, c.message_id
         LIMIT 2
    ), lent AS (
        SELECT w.lexeme,
               sum(round(coalesce(l.lends, 1) * w.positions / s.positions * 4294967296) / 4294967296) AS weight
          FROM lender l
          JOIN window_word w ON w.match_key = l.message_key
          JOIN (SELECT w.match_key, sum(w.positions) AS positions FROM window_word w GROUP BY w.match_key) s
            ON s.match_key = l.message_key
         WHERE w.lexeme <> ALL (p_terms)
         GROUP BY w.lexeme
    ), spread AS (
        SELECT u.lexeme, count(*) AS n FROM match m CROSS JOIN LATERAL unnest(tsvector_to_array(m.document)) u(lexeme)
         WHERE u.lexeme IN (SELECT l.lexeme FROM lent l)
         GROUP BY u.lexeme
    ), expansion AS (
        SELECT l.lexeme,
               round(l.weight * ln(1 + (((SELECT count(*) FROM match) - s.n)::float8 + 0.5) / (s.n::float8 + 0.5))
                     * 4294967296)
                 / 4294967296 AS weight
          FROM lent l JOIN spread s ON s.lexeme = l.lexeme
         WHERE s.n >= 2
         ORDER BY 2 DESC, l.lexeme COLLATE "C"
         LIMIT 5
    ), expanded AS (
        SELECT c.message_key, coalesce(sum(e.weight), 0) AS weight
          FROM covered c
          LEFT JOIN expansion e ON e.lexeme = ANY (tsvector_to_array(c.document))
         GROUP BY c.message_key
    )
    SELECT c.message_key, c.window_coverage,
           CASE WHEN p_settings.feedback_weight = 0 THEN 0::float8
                ELSE coalesce(p_settings.feedback_weight * x.weight / nullif(max(x.weight) OVER (), 0), 0) END
      FROM covered c JOIN expanded x ON x.message_key = c.message_key;
END
$function$;

COMMENT ON FUNCTION history._window_scores(bigint[], text[], timestamptz[], float8[], tsvector[], bigint[], tsvector[],
                                           text[], float8[], history.search_settings, integer) IS
    'Internal: the window stage of the ranking: window coverage and feedback for one search''s first matches';
REVOKE ALL ON FUNCTION history._window_scores(bigint[], text[], timestamptz[], float8[], tsvector[], bigint[], tsvector[],
                                              text[], float8[], history.search_settings, integer) FROM PUBLIC;
