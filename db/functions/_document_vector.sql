-- _document_vector: the tsvector of a message body in a language
-- (docs/text-analysis.md). Weight contract (ranking relies on it):
--   'A' whole tokens: words as the language's configuration makes them
--       (stemmed, stop words dropped), identifiers in their normal form
--       (proj-4821, etc/atlas/config.yaml), CJK bigrams (a run of one
--       character as itself);
--   'D' parts of identifiers (_identifier_parts): segments, their words,
--       letter and digit runs (etc, atlas, config.yaml, 4821, connection),
--       without one-character parts and scheme/domain noise (www, com, ...).
--       A part that is itself an identifier is kept as it is; a plain one
--       goes through the language's configuration like a word.
-- Queries are analysed by _query_terms with the same tokeniser.
CREATE OR REPLACE FUNCTION history._document_vector(p_body text, p_config regconfig)
RETURNS tsvector
LANGUAGE plpgsql
IMMUTABLE PARALLEL SAFE STRICT
SET search_path = pg_catalog, history, pg_temp
SET plan_cache_mode = force_generic_plan
AS $function$
DECLARE
    v_words       text[];
    v_identifiers text[];
    v_cjk         text[];
    v_document    tsvector;
BEGIN
    -- Fast path: text whose tokens can only be words (no separator before a
    -- character, no digit next to a non-digit, no CJK). The parser then sees
    -- what it would see in the word tokens, so the result is the same.
    IF p_body !~ (E'[./\\\\_:#@=&+<>~-][^[:space:]]|[0-9][^0-9[:space:]]|[^0-9[:space:]][0-9]|['
                  '\\u1100-\\u11ff\\u3005\\u3007\\u3040-\\u309f\\u30a0-\\u30fa\\u30fc-\\u30ff\\u3130-\\u318f'
                  '\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua960-\\ua97f\\uac00-\\ud7ff\\uf900-\\ufaff'
                  '\\uff66-\\uff9f\\U00020000-\\U0003134f]') THEN
        RETURN setweight(to_tsvector(p_config, p_body), 'A');
    END IF;

    SELECT array_agg(t.token ORDER BY t.ordinal) FILTER (WHERE t.kind = 'word'),
           array_agg(t.token ORDER BY t.ordinal) FILTER (WHERE t.kind = 'identifier'),
           array_agg(t.token ORDER BY t.ordinal) FILTER (WHERE t.kind = 'cjk')
      INTO v_words, v_identifiers, v_cjk
      FROM history._text_tokens(p_body) t;

    v_document := setweight(to_tsvector(p_config, coalesce(array_to_string(v_words, ' '), '')), 'A');
    IF v_identifiers IS NULL AND v_cjk IS NULL THEN
        RETURN v_document;  -- words only: nothing to add
    END IF;

    RETURN (
        WITH parts AS MATERIALIZED (
            SELECT DISTINCT p.part, p.is_identifier
              FROM unnest(v_identifiers) i(token) CROSS JOIN LATERAL history._identifier_parts(i.token) p
             WHERE NOT p.is_noise AND NOT p.is_short
        ), as_is AS (
            -- Lexemes that bypass the configuration: identifiers whole (A),
            -- CJK bigrams (A), identifier parts that are identifiers (D).
            SELECT i.n AS n, i.token AS lexeme, 'A' AS weight
              FROM unnest(v_identifiers) WITH ORDINALITY i(token, n)
            UNION ALL
            SELECT 1000000 + c.n * 100000 + g.i, substr(c.token, g.i, 2), 'A'
              FROM unnest(v_cjk) WITH ORDINALITY c(token, n)
             CROSS JOIN LATERAL generate_series(1, GREATEST(char_length(c.token) - 1, 1)) g(i)
            UNION ALL
            SELECT NULL, p.part, 'D' FROM parts p WHERE p.is_identifier
        )
        SELECT v_document
            || setweight(to_tsvector(p_config, coalesce(
                   (SELECT string_agg(p.part, ' ') FROM parts p WHERE NOT p.is_identifier), '')), 'D')
               -- In tsvector input syntax ('lexeme':position weight, with '' and \\).
            || coalesce((SELECT string_agg('''' || replace(replace(a.lexeme, E'\\', E'\\\\'), '''', '''''')
                                           || ''':' || a.position || a.weight, ' ')
                           FROM (SELECT s.lexeme, s.weight, row_number() OVER (ORDER BY s.n, s.lexeme) AS position
                                   FROM as_is s
                                  -- PostgreSQL's limit on a lexeme (to_tsvector drops longer words too).
                                  WHERE octet_length(s.lexeme) < 2048) a
                        )::tsvector, ''::tsvector)
    );
END
$function$;

COMMENT ON FUNCTION history._document_vector(text, regconfig) IS
    'Internal: tsvector of a message body: whole words, identifiers and CJK bigrams weighted A, identifier parts D';
REVOKE ALL ON FUNCTION history._document_vector(text, regconfig) FROM PUBLIC;
