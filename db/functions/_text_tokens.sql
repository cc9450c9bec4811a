-- _text_tokens: the one tokeniser of documents and queries (docs/text-analysis.md).
-- Splits a text into tokens, in order, each of one kind:
--   'cjk'        a run of Han, Hiragana, Katakana or Hangul characters (no
--                spaces between words in those scripts: bigrammed later);
--   'identifier' a token with an inner . / \ _ : # @ = & + - or a digit next
--                to a non-digit (PROJ-4821, config.yaml, a URL, v3.0.0-rc1),
--                returned in its normal form: lower case, no URL scheme
--                (https://x.org/a and x.org/a are one identifier);
--   'word'       anything else, as written (the language's configuration
--                lower-cases, stems and drops stop words).
-- A token is a run of characters between white space and sentence punctuation
-- (, ; ! ? quotes brackets |, and their Unicode, CJK and full-width forms),
-- with ASCII punctuation trimmed from both ends: "(see /etc/x.conf)." has the
-- tokens see and etc/x.conf. Character classes are spelled out as code points,
-- never [[:alpha:]], so tokens do not depend on the database's locale; E''
-- literals do not depend on standard_conforming_strings.
CREATE OR REPLACE FUNCTION history._text_tokens(p_text text)
RETURNS TABLE (ordinal bigint, token text, kind text)
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT t.ordinal,
           CASE WHEN k.kind = 'identifier'
                THEN pg_catalog.regexp_replace(pg_catalog.lower(t.match[1]), '^[a-z][a-z0-9+.-]*://', '')
                ELSE t.match[1] END,
           k.kind
      FROM (SELECT
              -- Han (with its iteration marks), Hiragana, Katakana (not the
              -- middle dot), Hangul syllables and jamo, half-width Katakana.
              E'\\u1100-\\u11ff\\u3005\\u3007\\u3040-\\u309f\\u30a0-\\u30fa\\u30fc-\\u30ff\\u3130-\\u318f'
               '\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua960-\\ua97f\\uac00-\\ud7ff\\uf900-\\ufaff'
               '\\uff66-\\uff9f\\U00020000-\\U0003134f' AS cjk,
              -- Between tokens: white space, sentence punctuation, quotes,
              -- brackets; Unicode spaces, dashes, quotes, CJK and full-width punctuation.
              E'[:space:],;!?"''`()\\[\\]{}<>|\\u00a0\\u1680\\u2000-\\u203e\\u2060\\u3000-\\u3004\\u3008-\\u3020'
               '\\u30fb\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40\\uff5b-\\uff65' AS boundary,
              -- Trimmed from a token's ends, kept inside it ('-' last in a bracket).
              E'./\\\\_:#@~*+=&%$^-' AS punct) c
     CROSS JOIN LATERAL pg_catalog.regexp_matches(
              p_text,
              '[' OPERATOR(pg_catalog.||) c.cjk OPERATOR(pg_catalog.||) ']+|[^'
                  OPERATOR(pg_catalog.||) c.boundary OPERATOR(pg_catalog.||) c.cjk OPERATOR(pg_catalog.||) c.punct
                  OPERATOR(pg_catalog.||) '](?:[^' OPERATOR(pg_catalog.||) c.boundary OPERATOR(pg_catalog.||) c.cjk
                  OPERATOR(pg_catalog.||) ']*[^' OPERATOR(pg_catalog.||) c.boundary OPERATOR(pg_catalog.||) c.cjk
                  OPERATOR(pg_catalog.||) c.punct OPERATOR(pg_catalog.||) '])?',
              'g') WITH ORDINALITY t(match, ordinal)
     CROSS JOIN LATERAL (SELECT CASE
              WHEN t.match[1] OPERATOR(pg_catalog.~) ('^[' OPERATOR(pg_catalog.||) c.cjk OPERATOR(pg_catalog.||) ']') THEN 'cjk'
              WHEN t.match[1] OPERATOR(pg_catalog.~) E'[./\\\\_:#@=&+-]|[0-9][^0-9]|[^0-9][0-9]' THEN 'identifier'
              ELSE 'word' END AS kind) k
$function$;

COMMENT ON FUNCTION history._text_tokens(text) IS
    'Internal: the tokeniser shared by documents and queries (cjk runs, identifiers, words)';
REVOKE ALL ON FUNCTION history._text_tokens(text) FROM PUBLIC;
