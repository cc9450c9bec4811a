-- _query_tsquery: what a message must match for a query: the OR of its
-- alternatives (_query_lexemes), each a lexeme of its own or, for a typed
-- identifier, also the AND of its parts' lexemes, over the terms
-- _query_terms keeps (a part cut by the term limit drops its identifier's
-- parts group). Every lexeme is quoted as a tsquery literal: operators typed
-- in the query are never parsed. NULL when the query has no term.
CREATE OR REPLACE FUNCTION history._query_tsquery(p_query text, p_configs regconfig[], p_max_terms integer)
RETURNS tsquery
LANGUAGE plpgsql
IMMUTABLE PARALLEL SAFE STRICT
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_terms text[] := history._query_terms(p_query, p_configs, p_max_terms);
BEGIN
    IF cardinality(v_terms) = 0 THEN
        RETURN NULL;
    END IF;
    RETURN (
        WITH kept AS MATERIALIZED (
            SELECT l.alternative, l.part, l.lexeme
              FROM history._query_lexemes(p_query, p_configs) l
             WHERE l.lexeme = ANY (v_terms)
        ), quoted AS (
            SELECT k.alternative, k.part,
                   string_agg(DISTINCT E'''' || replace(replace(k.lexeme, E'\\', E'\\\\'), E'''', E'''''') || E'''', ' | ') AS any_of
              FROM kept k
             GROUP BY k.alternative, k.part
        ), parts_groups AS (
            -- Only when every part of the identifier kept a lexeme.
            SELECT q.alternative, '(' || string_agg('(' || q.any_of || ')', ' & ' ORDER BY q.part) || ')' AS all_of
              FROM quoted q
             WHERE q.part > 0
             GROUP BY q.alternative
            HAVING count(*) = (SELECT count(DISTINCT l.part) FROM history._query_lexemes(p_query, p_configs) l
                                WHERE l.alternative = q.alternative AND l.part > 0)
        )
        SELECT string_agg(a.expression, ' | ')::tsquery
          FROM (SELECT q.any_of AS expression FROM quoted q WHERE q.part = 0
                UNION ALL
                SELECT g.all_of FROM parts_groups g) a
    );
END
$function$;

COMMENT ON FUNCTION history._query_tsquery(text, regconfig[], integer) IS
    'Internal: the tsquery of a query text: OR of its alternatives, an identifier whole or all its parts';
REVOKE ALL ON FUNCTION history._query_tsquery(text, regconfig[], integer) FROM PUBLIC;
