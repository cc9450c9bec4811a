-- _query_lexemes: a query analysed as documents are (docs/text-analysis.md),
-- as rows of lexemes, each in an alternative of the query:
--   alternative  the token it comes from (its ordinal; a CJK bigram is an
--                alternative of its own);
--   part         0: the lexeme alone matches the alternative (a word in one
--                of p_configs, an identifier whole, a CJK bigram);
--                k > 0: the k-th atom of an identifier (_identifier_parts: a
--                run of letters or of dotted digits): the alternative also
--                matches where every atom occurs (PROJ-4821 is
--                'proj-4821' | ('proj' & '4821'), never 'proj' alone; see
--                "required" below for which atoms and when);
--   seen         the first-seen order (token, part, configuration, position).
-- A word or a plain part that one configuration drops as a stop word is
-- dropped for all ("the" does not become a term through 'simple').
CREATE OR REPLACE FUNCTION history._query_lexemes(p_query text, p_configs regconfig[])
RETURNS TABLE (alternative bigint, part bigint, seen bigint[], lexeme text)
LANGUAGE plpgsql
IMMUTABLE PARALLEL SAFE STRICT
SET search_path = pg_catalog, history, pg_temp
SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
    RETURN QUERY
    WITH tokens AS MATERIALIZED (
        SELECT DISTINCT ON (t.token, t.kind) t.ordinal, t.token, t.kind
          FROM history._text_tokens(p_query) t
         ORDER BY t.token, t.kind, t.ordinal
    ), required AS MATERIALIZED (
        -- The atoms an identifier's group requires: not noise, not a single
        -- letter (the v of v3, the A of launch:A); a single digit is required
        -- (alice2 is not alice). No group for an over-long identifier, one
        -- without an atom of two or more characters (v3), or one whose noise
        -- atoms leave a single atom (example.com is not example).
        SELECT t.ordinal, p.part_no, p.part, p.is_identifier
          FROM tokens t CROSS JOIN LATERAL history._identifier_parts(t.token) p
         WHERE t.kind = 'identifier' AND octet_length(t.token) < 2048
           AND p.is_atom AND NOT p.is_noise AND NOT (p.is_short AND p.part !~ '^[0-9]$')
           AND (SELECT bool_or(NOT a.is_short AND NOT a.is_noise)
                       AND (NOT bool_or(a.is_noise) OR count(*) FILTER (WHERE NOT a.is_noise AND NOT a.is_short) >= 2)
                  FROM history._identifier_parts(t.token) a WHERE a.is_atom)
    ), configs AS MATERIALIZED (
        SELECT c.config, c.n FROM unnest(p_configs) WITH ORDINALITY c(config, n)
    ), plain AS MATERIALIZED (
        -- Words, and the plain parts of identifiers, in every configuration.
        SELECT w.alternative, w.part, c.config_n, l.lexeme, l.positions[1] AS position,
               bool_and(l.lexeme IS NOT NULL) OVER (PARTITION BY w.alternative, w.part) AS in_every_config
          FROM (SELECT t.ordinal AS alternative, 0::bigint AS part, t.token AS text FROM tokens t WHERE t.kind = 'word'
                UNION ALL
                SELECT r.ordinal, r.part_no, r.part FROM required r WHERE NOT r.is_identifier) w
         CROSS JOIN LATERAL (SELECT c.n AS config_n, c.config FROM configs c) c
          LEFT JOIN LATERAL unnest(to_tsvector(c.config, w.text)) l ON true
    )
    SELECT t.ordinal, 0::bigint, ARRAY[t.ordinal, 0, 0, 0], t.token
      FROM tokens t
     WHERE t.kind = 'identifier' AND octet_length(t.token) < 2048
    UNION ALL
    SELECT r.ordinal, r.part_no, ARRAY[r.ordinal, r.part_no, 0, 0], r.part
      FROM required r WHERE r.is_identifier
    UNION ALL
    SELECT t.ordinal * 100000 + g.i, 0::bigint, ARRAY[t.ordinal, 0, 0, g.i], substr(t.token, g.i, 2)
      FROM tokens t
     CROSS JOIN LATERAL generate_series(1, GREATEST(char_length(t.token) - 1, 1)) g(i)
     WHERE t.kind = 'cjk'
    UNION ALL
    SELECT p.alternative, p.part, ARRAY[p.alternative, p.part, p.config_n, p.position], p.lexeme
      FROM plain p
     WHERE p.in_every_config;
END
$function$;

COMMENT ON FUNCTION history._query_lexemes(text, regconfig[]) IS
    'Internal: a query''s lexemes by alternative (whole tokens, and the parts groups of identifiers)';
REVOKE ALL ON FUNCTION history._query_lexemes(text, regconfig[]) FROM PUBLIC;
