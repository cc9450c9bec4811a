-- Revert history-search:_score from pg: back to its @v0.1.0 version
-- (another signature: the new function goes first).
DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                             bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery);
-- Deploy history-search:_score to pg
-- requires: core_tables
-- The function lives in db/functions/_score.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _score: the ranking of search_history, for all of one search's eligible
-- candidates at once (docs/decisions.md, "Ranking"). Every weight is a column
-- of history.search_settings. Per candidate d and query term t:
--
--   occurrences   tf(t,d): ts_rank's measure of t's positions in d with label
--                 weights {D: derived_term_weight, C, B, A: 1}, scaled so that
--                 one whole-token occurrence is 1: one position labelled D (a
--                 part derived from an identifier, e.g. "yaml" of
--                 "config.yaml") is derived_term_weight, more positions add
--                 less and less (two A: 1.25, three: 1.36). One C call per
--                 candidate and term; no unnesting of documents. (A document
--                 indexed without labels has only D positions, as PostgreSQL
--                 reads them: its counts all scale alike.)
--   length        len(d): the number of distinct lexemes of d.
--   rarity        idf(t) = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5)), N the number
--                 of candidates, n(t) those containing t. ONLY the eligible
--                 candidates count: a message the audience may not see never
--                 moves a score (SPEC §3, "Ranking statistics"). A term that is
--                 a name of the run's members (p_name_terms) has its rarity
--                 multiplied by name_term_weight: "Hey Melanie!" is weak evidence.
--   bm25(d)       Σ_t idf(t) · tf·(k1+1) / (tf + k1·(1 - b + b·len(d)/avg len)),
--                 k1 = bm25_k1, b = bm25_b.
--
--   text          = text_weight     · bm25(d) / the best bm25 of the candidates
--   coverage      = coverage_weight · Σ idf of the terms d contains / Σ idf of the
--                   terms any candidate contains
--   actor         = actor_weight         when the author is the requester or linked to them
--   conversation  = conversation_weight  when d is in the run's destination conversation
--   participation = participation_weight when the requester (or a linked account) wrote in d's conversation
--   recency       = recency_weight · 0.5 ^ (age / recency_half_life)
--   named_speaker = named_speaker_weight when the author is one of p_named_authors:
--                   people of the run (audience, requester, agent) the query names
--   total         = their sum (search_history orders by it, then sent_at
--                   descending, then message id).
--
-- text is relative to the best match of the search (1 for it), so the other
-- weights read as "how much of the best match's text score this is worth":
-- small signal weights break near-ties and cannot bury a clearly stronger match.
CREATE OR REPLACE FUNCTION history._score(
    p_message_keys       bigint[],
    p_documents          tsvector[],
    p_authors            bigint[],
    p_conversations      bigint[],
    p_sent_at            timestamptz[],
    p_terms              text[],
    p_name_terms         text[],
    p_requester_accounts bigint[],
    p_conversation       bigint,
    p_participated       bigint[],
    p_named_authors      bigint[],
    p_settings           history.search_settings,
    p_now                timestamptz)
RETURNS TABLE (message_key bigint, text_score float8, coverage float8, actor float8, conversation float8,
               participation float8, recency float8, named_speaker float8, total float8)
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
-- Planned once per session: the inputs are arrays, there is nothing for a custom plan to learn.
SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
    RETURN QUERY
    WITH candidate AS MATERIALIZED (
        SELECT c.*, length(c.document)::float8 AS length
          FROM ROWS FROM (unnest(p_message_keys), unnest(p_documents), unnest(p_authors),
                          unnest(p_conversations), unnest(p_sent_at))
               AS c(message_key, document, author_key, conversation_key, sent_at)
    ), term AS MATERIALIZED (
        -- each query term as a one-lexeme tsquery (quoted: its text is never parsed as operators);
        -- materialized, so each is built once, not once per candidate it is tested against
        SELECT t.ord, t.lexeme,
               ('''' || replace(replace(t.lexeme, chr(92), chr(92) || chr(92)), '''', '''''') || '''')::tsquery AS query
          FROM unnest(p_terms) WITH ORDINALITY t(lexeme, ord)
    ), occurrence AS MATERIALIZED (
        -- tf: ts_rank's occurrence measure of one term, scaled so that one whole-token occurrence is 1
        SELECT c.message_key, t.ord,
               round(ts_rank(ARRAY[p_settings.derived_term_weight, 1, 1, 1]::float4[], c.document, t.query, 0)
                     * 1.64493406685 * 1e6) / 1e6 AS tf
          FROM candidate c
          JOIN term t ON c.document @@ t.query
    ), corpus AS (
        SELECT count(*)::float8 AS n, greatest(avg(c.length), 1.0) AS avg_length FROM candidate c
    ), rarity AS (
        -- Sums below add values rounded to multiples of 2^-32: exact in float8,
        -- so they do not depend on the order rows come in and equal matches tie exactly.
        SELECT o.ord,
               round(ln(1 + (k.n - count(*) + 0.5) / (count(*) + 0.5))
                     * CASE WHEN p_terms[o.ord] = ANY (p_name_terms) THEN p_settings.name_term_weight ELSE 1.0 END
                     * 4294967296) / 4294967296 AS idf
          FROM occurrence o CROSS JOIN corpus k
         GROUP BY o.ord, k.n
    ), matched AS (
        SELECT o.message_key,
               sum(round(r.idf * o.tf * (p_settings.bm25_k1 + 1)
                         / (o.tf + p_settings.bm25_k1 * (1 - p_settings.bm25_b
                                                         + p_settings.bm25_b * c.length / k.avg_length))
                         * 4294967296) / 4294967296) AS bm25,
               sum(r.idf) AS rarity_matched
          FROM occurrence o
          JOIN rarity r ON r.ord = o.ord
          JOIN candidate c ON c.message_key = o.message_key
         CROSS JOIN corpus k
         GROUP BY o.message_key
    ), component AS (
        SELECT c.message_key,
               p_settings.text_weight * coalesce(m.bm25 / nullif(max(m.bm25) OVER (), 0), 0) AS text_score,
               p_settings.coverage_weight
                 * coalesce(m.rarity_matched / nullif((SELECT sum(r.idf) FROM rarity r), 0), 0) AS coverage,
               p_settings.actor_weight * (c.author_key = ANY (p_requester_accounts))::int AS actor,
               p_settings.conversation_weight * (c.conversation_key = p_conversation)::int AS conversation,
               p_settings.participation_weight * (c.conversation_key = ANY (p_participated))::int AS participation,
               -- Capped at 1000 half-lives so that very old messages do not underflow.
               p_settings.recency_weight * power(0.5::float8, least(1000.0::float8, greatest(0.0::float8,
                   extract(epoch FROM (p_now - c.sent_at))::float8
                   / extract(epoch FROM p_settings.recency_half_life)::float8))) AS recency,
               p_settings.named_speaker_weight * (c.author_key = ANY (p_named_authors))::int AS named_speaker
          FROM candidate c
          LEFT JOIN matched m ON m.message_key = c.message_key
    )
    SELECT c.message_key, c.text_score, c.coverage, c.actor, c.conversation, c.participation, c.recency,
           c.named_speaker,
           c.text_score + c.coverage + c.actor + c.conversation + c.participation + c.recency + c.named_speaker
      FROM component c;
END
$function$;

COMMENT ON FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                                   bigint, bigint[], bigint[], history.search_settings, timestamptz) IS
    'Internal: the ranking components of one search''s eligible candidates (BM25 text, rarity coverage, signals)';
REVOKE ALL ON FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                                      bigint, bigint[], bigint[], history.search_settings, timestamptz) FROM PUBLIC;

RESET ROLE;
COMMIT;
