-- _identifier_parts: the parts of an identifier token (in its normal form, as
-- _text_tokens returns it), for documents (weighted D) and for the parts
-- group of a typed identifier in a query (docs/text-analysis.md):
--   the segments between / \ @ : # = & +   (etc, atlas, config.yaml, github.com, 1234)
--   those split again on - and _            (err, connection, reset, v3.0.0, rc1)
--   the runs of letters and of dotted digits (config, yaml, 2.4, 4821)
-- with ASCII punctuation trimmed from their ends, but not the identifier
-- itself. Flags: is_identifier (kept as it is) or plain (analysed like a word
-- by the language's configuration); is_atom (a run of letters or digits);
-- is_noise (www com org net edu gov http https ftp mailto html htm php) and
-- is_short (one character): documents index neither, so that a part shared by
-- unrelated identifiers does not join them; a query's atoms group
-- (_query_lexemes) requires neither, except a single digit (alice2 is not alice).
-- Each part once, in order of first appearance.
CREATE OR REPLACE FUNCTION history._identifier_parts(p_identifier text)
RETURNS TABLE (part_no bigint, part text, is_identifier boolean, is_atom boolean, is_noise boolean, is_short boolean)
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT pg_catalog.row_number() OVER (ORDER BY pg_catalog.min(p.n)), p.part,
           p.part OPERATOR(pg_catalog.~) E'[./\\\\_:#@=&+-]|[0-9][^0-9]|[^0-9][0-9]',
           pg_catalog.bool_or(p.n OPERATOR(pg_catalog.>) 2000000),
           p.part OPERATOR(pg_catalog.=) ANY ('{www,com,org,net,edu,gov,http,https,ftp,mailto,html,htm,php}'::text[]),
           pg_catalog.char_length(p.part) OPERATOR(pg_catalog.<) 2
      FROM (SELECT pg_catalog.btrim(s.piece, E'./\\\\_:#@~*+=&%$^-') AS part, s.n
              FROM (SELECT x.piece, x.n FROM pg_catalog.regexp_split_to_table(p_identifier, E'[/\\\\@:#=&+]+')
                                             WITH ORDINALITY x(piece, n)
                    UNION ALL
                    SELECT x.piece, 1000000 OPERATOR(pg_catalog.+) x.n
                      FROM pg_catalog.regexp_split_to_table(p_identifier, E'[/\\\\@:#=&+_-]+') WITH ORDINALITY x(piece, n)
                    UNION ALL
                    SELECT a.m[1], 2000000 OPERATOR(pg_catalog.+) a.n
                      FROM pg_catalog.regexp_matches(p_identifier, E'[0-9]+(?:[.][0-9]+)*|[^0-9./\\\\_:#@~*+=&%$^-]+', 'g')
                           WITH ORDINALITY a(m, n)) s) p
     WHERE p.part OPERATOR(pg_catalog.<>) p_identifier AND p.part OPERATOR(pg_catalog.<>) ''
     GROUP BY p.part
$function$;

COMMENT ON FUNCTION history._identifier_parts(text) IS
    'Internal: the parts of an identifier (segments, their words, letter and digit runs), noise dropped';
REVOKE ALL ON FUNCTION history._identifier_parts(text) FROM PUBLIC;
