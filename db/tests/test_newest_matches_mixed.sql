-- _newest_matches (white-box): a slice walk that mixes its reads. A short
-- list's slice names either the slice's hours or the list's whole weeks,
-- chosen per slice by the estimates; when it first reads hours and then
-- weeks, the weeks slice's newest week reaches back over the hours already
-- read, and must stop at them (sent_at < the slice's end): no match twice.
-- The tests that force a strategy force one read for every slice, so only
-- the estimates make this mix.
BEGIN;
SELECT plan(19);

-- 600 messages, one every two hours from 2026-01-01 (seven weeks); every
-- tenth in one of 25 small listed groups, and half of those match "medlar";
-- the rest in one big group outside the list.
DO $world$
BEGIN
    PERFORM history.upsert_account('mx-bot', 'agent');
    PERFORM history.upsert_account('mx-ann', 'person');
    PERFORM history.upsert_conversation(c, 'group')
       FROM (SELECT 'mx-o' UNION ALL SELECT 'mx-l' || i FROM generate_series(0, 24) i) v(c);
    PERFORM history.add_member(c, a, '2025-01-01 00:00+00')
       FROM (SELECT 'mx-o' UNION ALL SELECT 'mx-l' || i FROM generate_series(0, 24) i) v(c),
            unnest(ARRAY['mx-bot', 'mx-ann']) a;
    PERFORM history.post_message(pg_catalog.format('mx-%s', k),
                                 CASE WHEN k % 10 = 0 THEN 'mx-l' || (k / 10) % 25 ELSE 'mx-o' END, 'mx-ann',
                                 CASE WHEN k % 20 = 0 THEN 'medlar fig' ELSE 'filler words' END,
                                 timestamptz '2026-01-01 00:00+00' + k * interval '2 hours')
      FROM generate_series(1, 600) k;
END
$world$;
ANALYZE history.message_search_documents, history.conversations;
-- The estimates of a table 10 000 times this one, every share the same
-- (rows, matches and the list's rows scale alike): slices are then sized as
-- at millions of rows, starting with an hour or two. With these shares the
-- estimates choose slices, read the newest hours by their hour keys and then,
-- once a slice is wide enough, the list's whole weeks (checked with a traced
-- copy of the function). Rolled back with the file.
UPDATE pg_catalog.pg_class SET reltuples = reltuples * 10000
 WHERE oid = 'history.message_search_documents'::pg_catalog.regclass;

CREATE TEMP TABLE mx AS
SELECT (SELECT account_key FROM history.accounts WHERE account_id = 'mx-bot') AS bot,
       ARRAY(SELECT conversation_key FROM history.conversations WHERE conversation_id LIKE 'mx-l%' ORDER BY 1) AS list;

CREATE FUNCTION pg_temp.expected(p_before timestamptz, p_count integer) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}') FROM (
        SELECT d.message_id, d.sent_at FROM history.message_search_documents d
         WHERE d.document @@ 'medlar' AND d.conversation_key = ANY ((SELECT list FROM pg_temp.mx)::bigint[])
           AND (p_before IS NULL OR d.sent_at < p_before)
         ORDER BY d.sent_at DESC, d.message_id DESC LIMIT p_count) x $$;
CREATE FUNCTION pg_temp.got(p_before timestamptz, p_count integer) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}')
      FROM history._newest_matches(1, 'medlar', (SELECT bot FROM mx), (SELECT list FROM mx), NULL, false, NULL,
                                   NULL, p_before, p_count, NULL) $$;

CREATE FUNCTION pg_temp.estimated_matches() RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE v_plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.document @@ $1'
       INTO v_plan USING 'medlar'::tsquery;
    RETURN (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
CREATE TEMP TABLE estimates AS
SELECT pg_temp.estimated_matches() AS m, c.reltuples::float8 AS t,
       history._listed_rows((SELECT list FROM mx), c.reltuples) AS s
  FROM pg_catalog.pg_class c WHERE c.oid = 'history.message_search_documents'::pg_catalog.regclass;

-- The estimates that make the mix (if the world changes, these say so).
SELECT ok((SELECT m / t BETWEEN 0.04 AND 0.06 FROM estimates),
          'the estimates: one message in twenty matches (many more than 20 times the counts below: slices, not the text plan)');
SELECT ok((SELECT s / t BETWEEN 0.08 AND 0.12 FROM estimates),
          'the estimates: the list holds one message in ten (its weeks hold few of the rows, so whole weeks become cheap)');

SELECT is(pg_temp.got(NULL, n), pg_temp.expected(NULL, n),
          'chosen by estimate, hours then weeks: the newest ' || n || ', each once')
  FROM generate_series(2, 12) n;
-- p_before after every row; at the very instant of the newest match (mx-600,
-- 2026-02-20 00:00: left out) and just after it (kept); inside a week.
SELECT is(pg_temp.got(b, 5), pg_temp.expected(b, 5),
          'chosen by estimate, before ' || b::text || ': the newest 5 before it, each once')
  FROM unnest(ARRAY['2026-02-21 20:00+00', '2026-02-20 00:00+00', '2026-02-20 00:00:00.000001+00',
                    '2026-02-17 12:00+00']::timestamptz[]) b;
SELECT is((pg_temp.got('2026-02-20 00:00+00', 1))[1], 'mx-580',
          'before the instant mx-600 was sent: mx-600 is not among them');
SELECT is((pg_temp.got('2026-02-20 00:00:00.000001+00', 1))[1], 'mx-600',
          'before the instant just after: mx-600 is');

SELECT * FROM finish();
ROLLBACK;
