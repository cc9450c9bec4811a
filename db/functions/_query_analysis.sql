-- _query_analysis: a query text analysed as documents are
-- (docs/text-analysis.md), once per search:
--   terms  its distinct lexemes, first seen first, at most p_max_terms (a
--          search's coverage and matched_terms count these);
--   query  what a message must match: the OR of its alternatives
--          (_query_lexemes), each a lexeme of its own or, for a typed
--          identifier, also the AND of its atoms' lexemes, over the kept
--          terms (an atom cut by the term limit drops its identifier's
--          group); every lexeme quoted as a tsquery literal, so operators
--          typed in the query are never parsed. NULL when there is no term.
-- Text of words only, in one language, takes a fast path: the lexemes of
-- to_tsvector(language, query), which is what the general path yields for it.
CREATE OR REPLACE FUNCTION history._query_analysis(
    p_query text, p_configs regconfig[], p_max_terms integer, OUT terms text[], OUT query tsquery)
LANGUAGE plpgsql
IMMUTABLE PARALLEL SAFE STRICT
SET search_path = pg_catalog, history, pg_temp
-- Planned once per session: a custom plan per search would cost more than the analysis.
SET plan_cache_mode = force_generic_plan
AS $function$
BEGIN
    IF cardinality(p_configs) = 1
       AND p_query !~ (E'[./\\\\_:#@=&+<>~-][^[:space:]]|[0-9][^0-9[:space:]]|[^0-9[:space:]][0-9]|['
                       '\\u1100-\\u11ff\\u3005\\u3007\\u3040-\\u309f\\u30a0-\\u30fa\\u30fc-\\u30ff\\u3130-\\u318f'
                       '\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua960-\\ua97f\\uac00-\\ud7ff\\uf900-\\ufaff'
                       '\\uff66-\\uff9f\\U00020000-\\U0003134f]') THEN
        SELECT coalesce(array_agg(t.lexeme ORDER BY t.first_position, t.lexeme), '{}') INTO terms
          FROM (SELECT u.lexeme, min(pos) AS first_position
                  FROM unnest(to_tsvector(p_configs[1], p_query)) u CROSS JOIN LATERAL unnest(u.positions) pos
                 GROUP BY u.lexeme
                 ORDER BY min(pos), u.lexeme
                 LIMIT p_max_terms) t;
        IF cardinality(terms) > 0 THEN
            query := array_to_string(ARRAY(SELECT E'''' || replace(replace(t, E'\\', E'\\\\'), E'''', E'''''') || E''''
                                             FROM unnest(terms) t), ' | ')::tsquery;
        END IF;
        RETURN;
    END IF;

    WITH lexemes AS MATERIALIZED (
        SELECT l.alternative, l.part, l.seen, l.lexeme FROM history._query_lexemes(p_query, p_configs) l
    ), kept_terms AS MATERIALIZED (
        SELECT l.lexeme, min(l.seen) AS first_seen FROM lexemes l
         GROUP BY l.lexeme ORDER BY min(l.seen), l.lexeme LIMIT p_max_terms
    ), quoted AS MATERIALIZED (
        SELECT l.alternative, l.part,
               string_agg(DISTINCT E'''' || replace(replace(l.lexeme, E'\\', E'\\\\'), E'''', E'''''') || E'''', ' | ') AS any_of
          FROM lexemes l JOIN kept_terms k ON k.lexeme = l.lexeme
         GROUP BY l.alternative, l.part
    ), groups AS (
        -- Only when every atom of the identifier kept a lexeme.
        SELECT q.alternative, '(' || string_agg('(' || q.any_of || ')', ' & ' ORDER BY q.part) || ')' AS all_of
          FROM quoted q
         WHERE q.part > 0
         GROUP BY q.alternative
        HAVING count(*) = (SELECT count(DISTINCT l.part) FROM lexemes l WHERE l.alternative = q.alternative AND l.part > 0)
    )
    SELECT (SELECT coalesce(array_agg(k.lexeme ORDER BY k.first_seen, k.lexeme), '{}') FROM kept_terms k),
           (SELECT string_agg(a.expression, ' | ')::tsquery
              FROM (SELECT q.any_of AS expression FROM quoted q WHERE q.part = 0
                    UNION ALL
                    SELECT g.all_of FROM groups g) a)
      INTO terms, query;
END
$function$;

COMMENT ON FUNCTION history._query_analysis(text, regconfig[], integer) IS
    'Internal: a query''s terms and tsquery (OR of alternatives; an identifier whole or all its atoms), analysed as documents are';
REVOKE ALL ON FUNCTION history._query_analysis(text, regconfig[], integer) FROM PUBLIC;
