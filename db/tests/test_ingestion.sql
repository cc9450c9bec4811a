-- Ingestion contract (SPEC §6, §7): arguments, unknown ids, conflicting
-- writes, idempotent repeats, the search projection, canonical events,
-- lineage closure and identity components.
BEGIN;
SELECT plan(128);

-- ============================================================ upsert_account
SELECT throws_ok($$SELECT history.upsert_account(NULL, 'person')$$, 'HS001', NULL, 'upsert_account: null id is HS001');
SELECT throws_ok($$SELECT history.upsert_account('   ', 'person')$$, 'HS001', NULL, 'upsert_account: blank id is HS001');
SELECT throws_ok($$SELECT history.upsert_account('', 'person')$$, 'HS001', NULL, 'upsert_account: empty id is HS001');
SELECT throws_ok($$SELECT history.upsert_account('ing-x', 'robot')$$, 'HS001', NULL, 'upsert_account: unknown kind is HS001');
SELECT throws_ok($$SELECT history.upsert_account('ing-x', NULL)$$, 'HS001', NULL, 'upsert_account: null kind is HS001');
SELECT is((SELECT count(*)::int FROM history.accounts WHERE account_id = 'ing-x'), 0, 'upsert_account: a refused call creates nothing');

SELECT lives_ok($$SELECT history.upsert_account('ing-ann', 'person', 'Ann')$$, 'upsert_account: creates a person');
SELECT lives_ok($$SELECT history.upsert_account('ing-ann', 'person', 'Ann B.')$$, 'upsert_account: repeat with a new display name');
SELECT is((SELECT display_name FROM history.accounts WHERE account_id = 'ing-ann'), 'Ann B.', 'upsert_account: display name updated');
SELECT is((SELECT count(*)::int FROM history.accounts WHERE account_id = 'ing-ann'), 1, 'upsert_account: still one row');
SELECT throws_ok($$SELECT history.upsert_account('ing-ann', 'agent')$$, 'HS004', NULL, 'upsert_account: changing the kind is HS004');
SELECT is((SELECT kind FROM history.accounts WHERE account_id = 'ing-ann'), 'person', 'upsert_account: kind unchanged after HS004');
SELECT is((SELECT component_key = account_key FROM history.accounts WHERE account_id = 'ing-ann'), true,
          'upsert_account: a new account is its own identity component');

DO $world$
BEGIN
    PERFORM history.upsert_account('ing-bob', 'person');
    PERFORM history.upsert_account('ing-cat', 'person');
    PERFORM history.upsert_account('ing-dan', 'person');
    PERFORM history.upsert_account('ing-bot', 'agent');
END
$world$;

-- ============================================================ upsert_conversation
SELECT throws_ok($$SELECT history.upsert_conversation(NULL, 'group')$$, 'HS001', NULL, 'upsert_conversation: null id is HS001');
SELECT throws_ok($$SELECT history.upsert_conversation(' ', 'group')$$, 'HS001', NULL, 'upsert_conversation: blank id is HS001');
SELECT throws_ok($$SELECT history.upsert_conversation('ing-c', 'forum')$$, 'HS001', NULL, 'upsert_conversation: unknown kind is HS001');
SELECT throws_ok($$SELECT history.upsert_conversation('ing-c', NULL)$$, 'HS001', NULL, 'upsert_conversation: null kind is HS001');
SELECT lives_ok($$SELECT history.upsert_conversation('ing-grp', 'group', 'G')$$, 'upsert_conversation: creates a group');
SELECT lives_ok($$SELECT history.upsert_conversation('ing-grp', 'group', 'G2')$$, 'upsert_conversation: repeat with a new title');
SELECT is((SELECT title FROM history.conversations WHERE conversation_id = 'ing-grp'), 'G2', 'upsert_conversation: title updated');
SELECT throws_ok($$SELECT history.upsert_conversation('ing-grp', 'channel')$$, 'HS004', NULL, 'upsert_conversation: changing the kind is HS004');
SELECT throws_ok($$SELECT history.upsert_conversation('ing-grp', 'direct')$$, 'HS004', NULL, 'upsert_conversation: group to direct is HS004');
SELECT is((SELECT kind FROM history.conversations WHERE conversation_id = 'ing-grp'), 'group', 'upsert_conversation: kind unchanged after HS004');

DO $world$
BEGIN
    PERFORM history.upsert_conversation('ing-dm', 'direct');
END
$world$;

-- ============================================================ add_member
SELECT throws_ok($$SELECT history.add_member('ing-nope', 'ing-ann', '2026-01-01')$$, 'HS003', NULL, 'add_member: unknown conversation is HS003');
SELECT throws_ok($$SELECT history.add_member('ing-grp', 'ing-nope', '2026-01-01')$$, 'HS003', NULL, 'add_member: unknown account is HS003');
SELECT throws_ok($$SELECT history.add_member(NULL, 'ing-ann', '2026-01-01')$$, 'HS001', NULL, 'add_member: null conversation is HS001');
SELECT throws_ok($$SELECT history.add_member('ing-grp', '', '2026-01-01')$$, 'HS001', NULL, 'add_member: blank account is HS001');
SELECT throws_ok($$SELECT history.add_member('ing-grp', 'ing-ann', NULL)$$, 'HS001', NULL, 'add_member: null since is HS001');
SELECT throws_ok($$SELECT history.add_member('ing-grp', 'ing-ann', 'infinity')$$, 'HS001', NULL, 'add_member: infinite since is HS001');

SELECT lives_ok($$SELECT history.add_member('ing-grp', 'ing-ann', '2026-01-01')$$, 'add_member: opens a membership');
SELECT lives_ok($$SELECT history.add_member('ing-grp', 'ing-ann', '2026-01-01')$$, 'add_member: an exact repeat is fine');
SELECT is((SELECT count(*)::int FROM history.memberships m JOIN history.accounts a USING (account_key)
            JOIN history.conversations c USING (conversation_key)
            WHERE a.account_id = 'ing-ann' AND c.conversation_id = 'ing-grp'), 1,
          'add_member: the repeat recorded nothing new');
SELECT throws_ok($$SELECT history.add_member('ing-grp', 'ing-ann', '2026-02-01')$$, 'HS004', NULL,
                 'add_member: while open with another since is HS004');

-- ============================================================ remove_member
SELECT throws_ok($$SELECT history.remove_member('ing-nope', 'ing-ann', '2026-03-01')$$, 'HS003', NULL, 'remove_member: unknown conversation is HS003');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-nope', '2026-03-01')$$, 'HS003', NULL, 'remove_member: unknown account is HS003');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', NULL)$$, 'HS001', NULL, 'remove_member: null until is HS001');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', '2025-12-01')$$, 'HS001', NULL, 'remove_member: until before since is HS001');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-bob', '2026-03-01')$$, 'HS004', NULL,
                 'remove_member: never a member (nothing open) is HS004');
SELECT lives_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', '2026-03-01')$$, 'remove_member: closes the membership');
SELECT is((SELECT m.until FROM history.memberships m JOIN history.accounts a USING (account_key)
            WHERE a.account_id = 'ing-ann'), '2026-03-01'::timestamptz, 'remove_member: until recorded');
SELECT lives_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', '2026-03-01')$$, 'remove_member: an exact repeat is fine');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', '2026-03-05')$$, 'HS004', NULL,
                 'remove_member: with nothing open and another time is HS004');
SELECT throws_ok($$SELECT history.add_member('ing-grp', 'ing-ann', '2026-02-15')$$, 'HS004', NULL,
                 'add_member: a rejoin inside the earlier membership is HS004');
SELECT lives_ok($$SELECT history.add_member('ing-grp', 'ing-ann', '2026-04-01')$$, 'add_member: rejoin after leaving');
SELECT is((SELECT array_agg(pg_catalog.tstzrange(m.since, m.until)::text ORDER BY m.since)
             FROM history.memberships m JOIN history.accounts a USING (account_key)
            WHERE a.account_id = 'ing-ann'),
          ARRAY[pg_catalog.tstzrange('2026-01-01', '2026-03-01')::text, pg_catalog.tstzrange('2026-04-01', NULL)::text],
          'add_member/remove_member: join, leave and rejoin give two intervals');
SELECT throws_ok($$SELECT history.remove_member('ing-grp', 'ing-ann', '2026-03-01')$$, 'HS001', NULL,
                 'remove_member: the old until is not a repeat once a later membership is open (before its since: HS001)');

-- Direct conversations have two parties.
SELECT lives_ok($$SELECT history.add_member('ing-dm', 'ing-ann', '2026-01-01')$$, 'add_member: first party of a direct conversation');
SELECT lives_ok($$SELECT history.add_member('ing-dm', 'ing-bot', '2026-01-01')$$, 'add_member: second party of a direct conversation');
SELECT throws_ok($$SELECT history.add_member('ing-dm', 'ing-cat', '2026-01-02')$$, 'HS004', NULL,
                 'add_member: a third party in a direct conversation is HS004');
SELECT lives_ok($$SELECT history.remove_member('ing-dm', 'ing-bot', '2026-02-01')$$, 'remove_member: a party leaves a direct conversation');
SELECT throws_ok($$SELECT history.add_member('ing-dm', 'ing-cat', '2026-02-02')$$, 'HS004', NULL,
                 'add_member: a third party cannot take a departed party''s place');
SELECT lives_ok($$SELECT history.add_member('ing-dm', 'ing-bot', '2026-02-03')$$, 'add_member: the same party may rejoin a direct conversation');

-- ============================================================ post_message
DO $world$
BEGIN
    PERFORM history.add_member('ing-grp', 'ing-bob', '2026-01-01');
    PERFORM history.add_member('ing-grp', 'ing-bot', '2026-01-01');
END
$world$;

SELECT throws_ok($$SELECT history.post_message(NULL, 'ing-grp', 'ing-bob', 'x', '2026-05-01')$$, 'HS001', NULL, 'post_message: null id is HS001');
SELECT throws_ok($$SELECT history.post_message(' ', 'ing-grp', 'ing-bob', 'x', '2026-05-01')$$, 'HS001', NULL, 'post_message: blank id is HS001');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-bob', NULL, '2026-05-01')$$, 'HS001', NULL, 'post_message: null body is HS001');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-bob', 'x', NULL)$$, 'HS001', NULL, 'post_message: null sent_at is HS001');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-bob', 'x', '2026-05-01', NULL)$$, 'HS001', NULL, 'post_message: null sources is HS001');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-bob', 'x', '2026-05-01', ARRAY['ing-m0'])$$, 'HS001', NULL,
                 'post_message: a message cannot be its own source (HS001)');
SELECT throws_ok($$SELECT history.post_message('ing-m0', NULL, 'ing-bob', 'x', '2026-05-01')$$, 'HS001', NULL, 'post_message: null conversation is HS001');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-nope', 'ing-bob', 'x', '2026-05-01')$$, 'HS003', NULL, 'post_message: unknown conversation is HS003');
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-nope', 'x', '2026-05-01')$$, 'HS003', NULL, 'post_message: unknown author is HS003');

-- A failing post leaves the database as it was.
CREATE TEMP TABLE before_counts ON COMMIT DROP AS
SELECT (SELECT count(*) FROM history.messages) AS messages, (SELECT count(*) FROM history.message_events) AS events,
       (SELECT count(*) FROM history.message_search_documents) AS documents, (SELECT count(*) FROM history.message_sources) AS sources,
       (SELECT count(*) FROM history.message_lineage) AS lineage, (SELECT count(*) FROM history.conversation_authors) AS authors;
SELECT throws_ok($$SELECT history.post_message('ing-m0', 'ing-grp', 'ing-bob', 'x', '2026-05-01', ARRAY['ing-nope'])$$, 'HS003', NULL,
                 'post_message: an unknown source is HS003');
SELECT is((SELECT row_to_json(b)::text FROM before_counts b),
          (SELECT row_to_json(x)::text FROM (
               SELECT (SELECT count(*) FROM history.messages) AS messages, (SELECT count(*) FROM history.message_events) AS events,
                      (SELECT count(*) FROM history.message_search_documents) AS documents, (SELECT count(*) FROM history.message_sources) AS sources,
                      (SELECT count(*) FROM history.message_lineage) AS lineage, (SELECT count(*) FROM history.conversation_authors) AS authors) x),
          'post_message: the failing post (unknown source) wrote nothing');
SELECT is((SELECT count(*)::int FROM history.messages WHERE message_id = 'ing-m0'), 0, 'post_message: no message row for the failing post');

SELECT lives_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00')$$,
                'post_message: posts a message');
SELECT is((SELECT count(*)::int FROM history.message_search_documents d WHERE d.message_id = 'ing-m1'), 1,
          'post_message: the projection has a row');
SELECT ok((SELECT d.document @@ to_tsquery('english', 'walrus') FROM history.message_search_documents d WHERE d.message_id = 'ing-m1'),
          'post_message: the projection document holds the text');
SELECT is((SELECT d.author_key = a.account_key AND d.sent_at = '2026-05-01 10:00'::timestamptz AND NOT d.has_lineage
             FROM history.message_search_documents d, history.accounts a WHERE d.message_id = 'ing-m1' AND a.account_id = 'ing-bob'),
          true, 'post_message: the projection has author, time and no lineage');
SELECT ok(EXISTS (SELECT 1 FROM history.conversation_authors ca JOIN history.accounts a ON a.account_key = ca.author_key
                   JOIN history.conversations c ON c.conversation_key = ca.conversation_key
                  WHERE a.account_id = 'ing-bob' AND c.conversation_id = 'ing-grp'),
          'post_message: the author is recorded as a participant of the conversation');

CREATE TEMP TABLE event_count ON COMMIT DROP AS SELECT count(*) AS n FROM history.message_events;
SELECT lives_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00')$$,
                'post_message: an identical re-post is fine');
SELECT is((SELECT count(*) FROM history.message_events), (SELECT n FROM event_count), 'post_message: the identical re-post added no event');
SELECT lives_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00', '{}')$$,
                'post_message: an identical re-post with explicit empty sources is fine');
SELECT throws_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates south', '2026-05-01 10:00')$$, 'HS004', NULL,
                 'post_message: re-post with a different body is HS004');
SELECT throws_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:01')$$, 'HS004', NULL,
                 'post_message: re-post with a different time is HS004');
SELECT throws_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bot', 'The walrus migrates north', '2026-05-01 10:00')$$, 'HS004', NULL,
                 'post_message: re-post with a different author is HS004');
SELECT throws_ok($$SELECT history.post_message('ing-m1', 'ing-dm', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00')$$, 'HS004', NULL,
                 'post_message: re-post in a different conversation is HS004');
SELECT is((SELECT count(*) FROM history.message_events), (SELECT n FROM event_count), 'post_message: the refused re-posts added no event');

-- ============================================================ lineage
DO $world$
BEGIN
    PERFORM history.post_message('ing-m2', 'ing-grp', 'ing-bot', 'derived from walrus', '2026-05-01 11:00', ARRAY['ing-m1']);
    PERFORM history.post_message('ing-m3', 'ing-grp', 'ing-bot', 'derived again', '2026-05-01 12:00', ARRAY['ing-m2']);
    PERFORM history.post_message('ing-m4', 'ing-grp', 'ing-bob', 'unrelated', '2026-05-01 12:30');
    PERFORM history.post_message('ing-m5', 'ing-grp', 'ing-bot', 'two parents', '2026-05-01 13:00', ARRAY['ing-m4', 'ing-m3', 'ing-m4']);
END
$world$;
SELECT throws_ok($$SELECT history.post_message('ing-m2', 'ing-grp', 'ing-bot', 'derived from walrus', '2026-05-01 11:00')$$, 'HS004', NULL,
                 'post_message: re-post with different (no) sources is HS004');
SELECT lives_ok($$SELECT history.post_message('ing-m5', 'ing-grp', 'ing-bot', 'two parents', '2026-05-01 13:00', ARRAY['ing-m3', 'ing-m4'])$$,
                'post_message: re-post with the same sources in another order (and without duplicates) is a no-op');
-- Source ids whose order differs between byte order and a linguistic collation
-- ('B' < 'a' in "C", 'a' < 'B' in en-US): an identical re-post must still be a no-op.
DO $world$
BEGIN
    PERFORM history.post_message('ing-src-B', 'ing-grp', 'ing-bob', 'upper', '2026-05-01 13:10');
    PERFORM history.post_message('ing-src-a', 'ing-grp', 'ing-bob', 'lower', '2026-05-01 13:11');
    PERFORM history.post_message('ing-m6', 'ing-grp', 'ing-bot', 'mixed-case sources', '2026-05-01 13:20', ARRAY['ing-src-a', 'ing-src-B']);
END
$world$;
SELECT lives_ok($$SELECT history.post_message('ing-m6', 'ing-grp', 'ing-bot', 'mixed-case sources', '2026-05-01 13:20', ARRAY['ing-src-a', 'ing-src-B'])$$,
                'post_message: an identical re-post with mixed-case source ids is a no-op (whatever the database collation)');
SELECT results_eq(
    $$SELECT a.message_id COLLATE "default" FROM history.message_lineage l
        JOIN history.messages m ON m.message_key = l.message_key JOIN history.messages a ON a.message_key = l.ancestor_key
       WHERE m.message_id = 'ing-m3' ORDER BY 1$$,
    ARRAY['ing-m1', 'ing-m2'],
    'lineage: the closure of m3 holds its source m2 and m2''s source m1 (transitive)');
SELECT results_eq(
    $$SELECT a.message_id COLLATE "default" FROM history.message_lineage l
        JOIN history.messages m ON m.message_key = l.message_key JOIN history.messages a ON a.message_key = l.ancestor_key
       WHERE m.message_id = 'ing-m5' ORDER BY 1$$,
    ARRAY['ing-m1', 'ing-m2', 'ing-m3', 'ing-m4'],
    'lineage: the closure of m5 is the union over both sources');
SELECT is((SELECT count(*)::int FROM history.message_sources s JOIN history.messages m ON m.message_key = s.message_key
            WHERE m.message_id = 'ing-m5'), 2, 'lineage: direct sources are recorded once each');
SELECT is((SELECT l.ancestor_conversation_key = a.conversation_key AND l.ancestor_sent_at = a.sent_at
             FROM history.message_lineage l
             JOIN history.messages m ON m.message_key = l.message_key JOIN history.messages a ON a.message_key = l.ancestor_key
            WHERE m.message_id = 'ing-m3' AND a.message_id = 'ing-m1'),
          true, 'lineage: the closure row carries the ancestor''s conversation and time');
SELECT is((SELECT array_agg(d.message_id COLLATE "default" ORDER BY d.message_id) FROM history.message_search_documents d WHERE d.has_lineage),
          ARRAY['ing-m2', 'ing-m3', 'ing-m5', 'ing-m6'], 'lineage: the projection flags exactly the messages with lineage');

-- ============================================================ edit_message
SELECT throws_ok($$SELECT history.edit_message('ing-nope', 'x', '2026-05-02')$$, 'HS003', NULL, 'edit_message: unknown message is HS003');
SELECT throws_ok($$SELECT history.edit_message(NULL, 'x', '2026-05-02')$$, 'HS001', NULL, 'edit_message: null id is HS001');
SELECT throws_ok($$SELECT history.edit_message('ing-m1', NULL, '2026-05-02')$$, 'HS001', NULL, 'edit_message: null body is HS001');
SELECT throws_ok($$SELECT history.edit_message('ing-m1', 'x', NULL)$$, 'HS001', NULL, 'edit_message: null time is HS001');
SELECT lives_ok($$SELECT history.edit_message('ing-m1', 'The narwhal migrates north', '2026-05-02')$$, 'edit_message: edits a live message');
SELECT ok((SELECT d.document @@ to_tsquery('english', 'narwhal') AND NOT d.document @@ to_tsquery('english', 'walrus')
             FROM history.message_search_documents d WHERE d.message_id = 'ing-m1'),
          'edit_message: the projection document reflects the edit (new word in, old word out)');
SELECT is((SELECT e.body FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
            WHERE m.message_id = 'ing-m1'), 'The narwhal migrates north', 'edit_message: the current event holds the new text');
SELECT lives_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00')$$,
                'post_message: an identical re-post of an edited message (created text) is still a no-op');
SELECT is((SELECT e.body FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
            WHERE m.message_id = 'ing-m1'), 'The narwhal migrates north', 'post_message: that re-post did not undo the edit');

-- ============================================================ delete_message
SELECT throws_ok($$SELECT history.delete_message('ing-nope', '2026-05-03')$$, 'HS003', NULL, 'delete_message: unknown message is HS003');
SELECT throws_ok($$SELECT history.delete_message(' ', '2026-05-03')$$, 'HS001', NULL, 'delete_message: blank id is HS001');
SELECT throws_ok($$SELECT history.delete_message('ing-m1', NULL)$$, 'HS001', NULL, 'delete_message: null time is HS001');
SELECT lives_ok($$SELECT history.delete_message('ing-m1', '2026-05-03')$$, 'delete_message: deletes a live message');
SELECT is((SELECT count(*)::int FROM history.message_search_documents d WHERE d.message_id = 'ing-m1'), 0,
          'delete_message: the projection row is gone');
SELECT throws_ok($$SELECT history.edit_message('ing-m1', 'back again', '2026-05-04')$$, 'HS004', NULL, 'edit_message: a deleted message is HS004');
SELECT throws_ok($$SELECT history.delete_message('ing-m1', '2026-05-04')$$, 'HS004', NULL, 'delete_message: deleting twice is HS004');
SELECT throws_ok($$SELECT history.delete_message('ing-m1', '2026-05-03')$$, 'HS004', NULL, 'delete_message: even an exact repeat of a delete is HS004');
SELECT results_eq(
    $$SELECT e.event_kind, e.body, e.occurred_at FROM history.message_events e JOIN history.messages m USING (message_key)
       WHERE m.message_id = 'ing-m1' ORDER BY e.event_key$$,
    $$VALUES ('created'::text, 'The walrus migrates north'::text, '2026-05-01 10:00'::timestamptz),
             ('edited', 'The narwhal migrates north', '2026-05-02'),
             ('deleted', NULL, '2026-05-03')$$,
    'message_events: created, edited, deleted in order');
SELECT is((SELECT m.current_event_key = max(e.event_key) FROM history.messages m JOIN history.message_events e USING (message_key)
            WHERE m.message_id = 'ing-m1' GROUP BY m.current_event_key), true,
          'messages: the current event is the latest in insertion order');
SELECT lives_ok($$SELECT history.post_message('ing-m1', 'ing-grp', 'ing-bob', 'The walrus migrates north', '2026-05-01 10:00')$$,
                'post_message: an identical re-post of a deleted message is a no-op');
SELECT is((SELECT count(*)::int FROM history.message_search_documents d WHERE d.message_id = 'ing-m1'), 0,
          'post_message: that re-post did not resurrect the message');

-- ============================================================ link_identity / revoke_proof
SELECT throws_ok($$SELECT history.link_identity('ing-p0', 'ing-ann', 'ing-ann', '2026-05-01')$$, 'HS001', NULL,
                 'link_identity: linking an account to itself is HS001');
SELECT throws_ok($$SELECT history.link_identity(NULL, 'ing-ann', 'ing-bob', '2026-05-01')$$, 'HS001', NULL, 'link_identity: null proof id is HS001');
SELECT throws_ok($$SELECT history.link_identity('ing-p0', 'ing-ann', 'ing-bob', NULL)$$, 'HS001', NULL, 'link_identity: null verified_at is HS001');
SELECT throws_ok($$SELECT history.link_identity('ing-p0', 'ing-ann', NULL, '2026-05-01')$$, 'HS001', NULL, 'link_identity: null account is HS001');
SELECT throws_ok($$SELECT history.link_identity('ing-p0', 'ing-ann', 'ing-nope', '2026-05-01')$$, 'HS003', NULL, 'link_identity: unknown account is HS003');

SELECT lives_ok($$SELECT history.link_identity('ing-p1', 'ing-ann', 'ing-cat', '2026-05-01')$$, 'link_identity: links two accounts');
SELECT is((SELECT count(DISTINCT component_key)::int FROM history.accounts WHERE account_id IN ('ing-ann', 'ing-cat')), 1,
          'link_identity: the linked accounts share a component_key');
SELECT lives_ok($$SELECT history.link_identity('ing-p1', 'ing-cat', 'ing-ann', '2026-05-01')$$, 'link_identity: an exact repeat (either order) is fine');
SELECT throws_ok($$SELECT history.link_identity('ing-p1', 'ing-ann', 'ing-dan', '2026-05-01')$$, 'HS004', NULL,
                 'link_identity: the same proof id for other accounts is HS004');
SELECT lives_ok($$SELECT history.link_identity('ing-p2', 'ing-cat', 'ing-dan', '2026-05-02')$$, 'link_identity: a second link');
SELECT is((SELECT count(DISTINCT component_key)::int FROM history.accounts WHERE account_id IN ('ing-ann', 'ing-cat', 'ing-dan')), 1,
          'link_identity: components merge transitively (ann - cat - dan)');
SELECT isnt((SELECT component_key FROM history.accounts WHERE account_id = 'ing-bob'),
            (SELECT component_key FROM history.accounts WHERE account_id = 'ing-ann'),
            'link_identity: an unlinked account keeps its own component');

SELECT throws_ok($$SELECT history.revoke_proof('ing-nope', '2026-06-01')$$, 'HS003', NULL, 'revoke_proof: unknown proof is HS003');
SELECT throws_ok($$SELECT history.revoke_proof(NULL, '2026-06-01')$$, 'HS001', NULL, 'revoke_proof: null proof id is HS001');
SELECT throws_ok($$SELECT history.revoke_proof('ing-p2', NULL)$$, 'HS001', NULL, 'revoke_proof: null time is HS001');
SELECT lives_ok($$SELECT history.revoke_proof('ing-p2', '2026-06-01')$$, 'revoke_proof: revokes a proof');
SELECT is((SELECT count(DISTINCT component_key)::int FROM history.accounts WHERE account_id IN ('ing-ann', 'ing-cat')), 1,
          'revoke_proof: the remaining link still joins ann and cat');
SELECT isnt((SELECT component_key FROM history.accounts WHERE account_id = 'ing-dan'),
            (SELECT component_key FROM history.accounts WHERE account_id = 'ing-ann'),
            'revoke_proof: the component splits again (dan is on its own)');
SELECT is((SELECT component_key = account_key FROM history.accounts WHERE account_id = 'ing-dan'), true,
          'revoke_proof: the split-off account is its own component again');
SELECT lives_ok($$SELECT history.revoke_proof('ing-p2', '2026-06-01')$$, 'revoke_proof: an exact repeat is fine');
SELECT throws_ok($$SELECT history.revoke_proof('ing-p2', '2026-06-02')$$, 'HS004', NULL, 'revoke_proof: a revoked proof with another time is HS004');
SELECT is((SELECT revoked_at FROM history.identity_proofs WHERE proof_id = 'ing-p2'), '2026-06-01'::timestamptz,
          'revoke_proof: the recorded revocation time is unchanged');

SELECT * FROM finish();
ROLLBACK;
