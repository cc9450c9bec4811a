"""Differential tests: the SQL surface against the reference model in tests/model/.

Hypothesis builds random scenarios (tests/model/scenarios.py); each is applied
to a fresh copy of the migrated template database through the public SQL
functions (world and runs as ``history_runtime``, searches as
``history_searcher``) and to the model, and after every search, delivery check
and reply the two must agree:

* hits (ids, conversation, time, speaker, role, text, matched terms, the
  actor/conversation/participation components), and their neighbours;
* status, ``budget_used``, ``budget_remaining``;
* the audit row: every exclusion count, the hit ids, the selected ids;
* ``check_delivery``'s rows, ``record_reply`` passing or ``HS005``, ``HS002`` for ended runs,
  ``HS001`` for a bad speaker or a limit below 1.

Ranking: under the shipped weights (``weights='default'``) ranks are compared as
a set (the model is told the SQL's order, and must agree on which eligible
matches make the top ``limit``) plus the spec's hard orderings; under the
``exact`` weights (text and recency 0, signals far apart; a DBA may set any
weights) the model knows the full order and the lists must be equal.

Each example makes its own database inside the test body (session fixtures
only, so hypothesis' function-scoped-fixture health check has nothing to say).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import psycopg
import pytest
from hypothesis import event as _event, example, given, note as _note, settings
from hypothesis.control import currently_in_test_context
from psycopg import sql

from tests.model import delivery, search as msearch
from tests.harness import call_search
from tests.model.ops import (Account, AddMember, Begin, Check, Conversation, Delete, Edit, End, Erase, InTenant, Link,
                             Post, RemoveMember, Reply, Revoke, Search, apply, at)
from tests.model.scenarios import Scenario, budget_scenarios, scenarios
from tests.model.world import World

def event(what: str) -> None:
    if currently_in_test_context():  # the hand-written scenarios run outside @given
        _event(what)


def note(what: str) -> None:
    if currently_in_test_context():
        _note(what)


EXACT_WEIGHTS = dict(text_weight=0, coverage_weight=1, actor_weight=10, conversation_weight=100,
                     participation_weight=1000, recency_weight=0, session_weight=0, period_weight=0, tells_time_weight=0,
                     window_coverage_weight=0, feedback_weight=0)


def _t(minute):
    return None if minute is None else at(minute)


class SqlSide:
    """The scenario applied through the SQL surface of one database.

    One database serves every example of a test (a fresh one per example costs
    more than the example); ``reset()`` empties it before each example: every
    table of the schema is truncated except the three the migrations seed
    (``search_settings``, put back to its defaults, ``query_digest_keys`` and
    ``write_locks``),
    and the reset is checked, so no example sees another's rows.
    """

    KEPT = ("search_settings", "query_digest_keys", "write_locks", "tenants")

    def __init__(self, url: str):
        self.admin = psycopg.connect(url, autocommit=True)
        self.runtime = psycopg.connect(url, autocommit=True)
        self.runtime.execute("SET SESSION AUTHORIZATION history_runtime")
        self.searcher = psycopg.connect(url, autocommit=True)
        self.searcher.execute("SET SESSION AUTHORIZATION history_searcher")
        self.tokens: dict[str, Any] = {}
        self.tables = [r[0] for r in self.admin.execute(
            "SELECT format('%%I.%%I', schemaname, tablename) FROM pg_catalog.pg_tables "
            "WHERE schemaname = 'history' AND tablename <> ALL (%s) ORDER BY 1", (list(self.KEPT),)).fetchall()]
        assert "history.messages" in self.tables and "history.runs" in self.tables
        self.lexicon = msearch.Lexicon(self.admin)
        self.default_settings = self.admin.execute(
            "SELECT to_jsonb(s) FROM history.search_settings s").fetchone()[0]

    def reset(self) -> None:
        self.tokens = {}
        self.admin.execute("TRUNCATE " + ", ".join(self.tables) + " RESTART IDENTITY")
        self.admin.execute("DELETE FROM history.search_settings")
        self.admin.execute("INSERT INTO history.search_settings "
                           "SELECT * FROM jsonb_populate_record(NULL::history.search_settings, %s)",
                           (json.dumps(self.default_settings),))
        left = self.admin.execute(
            "SELECT " + " + ".join(f"(SELECT count(*) FROM {t})" for t in self.tables)).fetchone()[0]
        assert left == 0

    def close(self):
        for c in (self.searcher, self.runtime, self.admin):
            c.close()

    def weights(self, kind: str) -> dict[str, float]:
        if kind == "exact":
            self.admin.execute(sql.SQL("UPDATE history.search_settings SET {}").format(
                sql.SQL(", ").join(sql.SQL("{} = {}").format(sql.Identifier(k), sql.Literal(v))
                                   for k, v in EXACT_WEIGHTS.items())))
        row = self.admin.execute(
            "SELECT to_jsonb(s) FROM history.search_settings s").fetchone()[0]
        return {k: float(v) for k, v in row.items() if k.endswith("_weight")}

    def world_op(self, op, tenant: str = "default") -> None:
        c = self.runtime
        if isinstance(op, InTenant):
            self.world_op(op.op, op.tenant)
        elif isinstance(op, Account):
            c.execute("SELECT history.upsert_account(%s, %s, p_tenant => %s)", (op.account_id, op.kind, tenant))
        elif isinstance(op, Conversation):
            c.execute("SELECT history.upsert_conversation(%s, %s, p_tenant => %s)",
                      (op.conversation_id, op.kind, tenant))
        elif isinstance(op, AddMember):
            c.execute("SELECT history.add_member(%s, %s, %s, %s)",
                      (op.conversation_id, op.account_id, at(op.since), tenant))
        elif isinstance(op, RemoveMember):
            c.execute("SELECT history.remove_member(%s, %s, %s, %s)",
                      (op.conversation_id, op.account_id, at(op.until), tenant))
        elif isinstance(op, Post):
            c.execute("SELECT history.post_message(%s, %s, %s, %s, %s, %s, %s)",
                      (op.message_id, op.conversation_id, op.author_id, op.body, at(op.sent_at), list(op.sources),
                       tenant))
        elif isinstance(op, Edit):
            c.execute("SELECT history.edit_message(%s, %s, %s, %s)", (op.message_id, op.body, at(op.at), tenant))
        elif isinstance(op, Delete):
            c.execute("SELECT history.delete_message(%s, %s, %s)", (op.message_id, at(op.at), tenant))
        elif isinstance(op, Erase):
            c.execute("SELECT history.erase_account(%s, %s, %s)", (op.account_id, at(op.at), tenant))
        elif isinstance(op, Link):
            c.execute("SELECT history.link_identity(%s, %s, %s, %s, %s)",
                      (op.proof_id, op.account_a, op.account_b, at(op.verified_at), tenant))
        elif isinstance(op, Revoke):
            c.execute("SELECT history.revoke_proof(%s, %s, %s)", (op.proof_id, at(op.at), tenant))
        elif isinstance(op, Begin):
            self.tokens[op.run] = c.execute(
                "SELECT history.begin_run(%s, %s, %s, %s, %s, %s)",
                (op.agent_id, op.conversation_id, op.requester_id, op.current_message_id,
                 list(op.loaded_message_ids), None if op.audience is None else list(op.audience))).fetchone()[0]
        elif isinstance(op, End):
            c.execute("SELECT history.end_run(%s)", (self.tokens[op.run],))
        else:
            raise TypeError(op)

    def search(self, op: Search):
        """(result as a dict, audit row as a dict), or the SQLSTATE of the error."""
        try:
            result = call_search(self.searcher, self.tokens[op.run], op.query, op.speaker, _t(op.after),
                                 _t(op.before), op.limit)
        except psycopg.Error as e:
            return e.diag.sqlstate
        audit = self.admin.execute(
            "SELECT to_jsonb(a) FROM history.search_audit a WHERE search_event_id = %s",
            (result["search_event_id"],)).fetchone()[0]
        return result, audit

    def check(self, run: str):
        try:
            return [tuple(r) for r in self.runtime.execute(
                "SELECT message_id, reason FROM history.check_delivery(%s) ORDER BY message_id",
                (self.tokens[run],)).fetchall()]
        except psycopg.Error as e:
            return e.diag.sqlstate

    def reply(self, op: Reply):
        try:
            self.runtime.execute("SELECT history.record_reply(%s, %s, %s, %s)",
                                 (self.tokens[op.run], op.message_id, op.body, at(op.sent_at)))
            return None
        except psycopg.Error as e:
            return e.diag.sqlstate


# --- comparing ---------------------------------------------------------------

def _shown_sql(j: dict) -> tuple:
    return (j["message_id"], j["conversation_id"], datetime.fromisoformat(j["sent_at"]), j["speaker_id"],
            j["speaker_role"], j["body"])


def _shown_model(s: msearch.Shown) -> tuple:
    return (s.message_id, s.conversation_id, s.sent_at, s.speaker_id, s.speaker_role, s.body)


def _hit_sql(h: dict) -> tuple:
    return (_shown_sql(h), h["reasons"]["matched_terms"],
            [_shown_sql(n) for n in h["before"]], [_shown_sql(n) for n in h["after"]])


def _hit_model(h: msearch.Hit) -> tuple:
    return (_shown_model(h.shown), h.matched_terms,
            [_shown_model(n) for n in h.before], [_shown_model(n) for n in h.after])


def _occurrences(lexicon: msearch.Lexicon, world: World, mid: str, terms: list[str]) -> dict[str, int]:
    lex = lexicon.lexemes(world.messages[mid].body)
    return {t: lex.get(t, 0) for t in terms}


def check_hard_orderings(world: World, run, lexicon, terms, eligible_ids, sql_hits, weights,
                         withheld: set[str]) -> None:
    """The orderings the spec fixes whatever the weights (all of them positive here).

    * the hits are in score order; equal scores by sent_at descending, then message id;
    * for two eligible matches a and b where a has at least b's occurrences of every
      alternative, no more distinct lexemes (BM25's length), at least b's
      actor/conversation/participation signals and is at least as recent: if a differs
      from b in any of these, a ranks strictly above b; if in none, they tie and the
      smaller message id comes first. (In particular a
      match of strictly more alternatives, all else equal, ranks higher.) So a
      returned b means a is returned too, and before b (unless a was withheld for want
      of budget: it ranked above b, and b got in for free as evidence already held).
      The window stage may lift b above a by what b's window holds, so pairs where b's
      lift (window_coverage + feedback) exceeds what a's own text guarantees a are skipped.
    """
    coverage = msearch.rarity_coverage(terms, [world.messages[m] for m in eligible_ids], lexicon)
    for x, y in zip(sql_hits, sql_hits[1:]):
        assert x["score"] >= y["score"], (x, y)
        if x["score"] == y["score"]:
            kx = (-datetime.fromisoformat(x["sent_at"]).timestamp(), x["message_id"])
            ky = (-datetime.fromisoformat(y["sent_at"]).timestamp(), y["message_id"])
            assert kx < ky, ("tie order", x["message_id"], y["message_id"])
    for h in sql_hits:
        r = h["reasons"]
        assert r["total"] == pytest.approx(h["score"])
        parts = ["text", "coverage", "actor", "conversation", "participation", "recency", "named_speaker", "session",
                 "period", "tells_time", "window_coverage", "feedback"]
        assert sum(r[p] for p in parts) == pytest.approx(r["total"])
        s = msearch.signals(world, run, world.messages[h["message_id"]])
        for p in ("actor", "conversation", "participation"):
            assert r[p] == pytest.approx(weights[f"{p}_weight"] * s[p]), (h["message_id"], p)
        assert r["coverage"] == pytest.approx(weights["coverage_weight"] * coverage[h["message_id"]])

    position = {h["message_id"]: i for i, h in enumerate(sql_hits)}
    info = {}
    for mid in eligible_ids:
        m = world.messages[mid]
        info[mid] = (_occurrences(lexicon, world, mid, terms), msearch.signals(world, run, m), m.sent_at,
                     len(lexicon.lexemes(m.body)))
    sessions = {mid: msearch.session_of(world, world.messages[mid], eligible_ids) for mid in eligible_ids}
    for b in position:
        ob, sb, tb, lb = info[b]
        for a in eligible_ids:
            if a == b:
                continue
            oa, sa, ta, la = info[a]
            if not (all(oa[t] >= ob[t] for t in terms) and all(sa[k] >= sb[k] for k in sa) and ta >= tb
                    and la <= lb):
                continue
            # (the period and tells_time signals are 0 here: the scenarios' queries name no
            # month, year or day, and never ask "when" or "how long")
            # the session signal: a's session holds at least b's (each other aside: with
            # session_weight below text_weight, a's stronger text outweighs being b's session)
            if weights["session_weight"] > 0 and not (sessions[b] - {a}) <= (sessions[a] - {b}):
                continue
            # the window stage (history._window_scores) lifts b by what its window holds. Window
            # coverage reaches the first 30 only: b has some exactly when it is among them, and
            # then so is a (which ranks above b before the stage), whose window holds a itself:
            # a gains at least window_coverage_weight x a's own share of the query's rarity.
            rb = sql_hits[position[b]]["reasons"]
            assured = weights["window_coverage_weight"] * coverage[a] if rb["window_coverage"] > 0 else 0.0
            if rb["window_coverage"] + rb["feedback"] > assured + 1e-9:
                continue
            # occurrences and length count only through the text score, time through recency
            # (the exact weights have neither: there such messages tie)
            differs = (sa != sb or (weights["text_weight"] > 0 and (oa != ob or la != lb))
                       or (weights["recency_weight"] > 0 and ta != tb))
            if (differs or a < b) and a not in withheld:
                assert a in position and position[a] < position[b], (
                    f"{a} must rank above {b}: occurrences {oa} vs {ob}, signals {sa} vs {sb}, {ta} vs {tb}, "
                    f"lengths {la} vs {lb}")


AUDIT_COUNTS = {rule: f"excluded_{rule}" for rule in msearch.RULES}


@pytest.fixture(scope="module")
def side(pg_server, template_db):
    name = pg_server.new_name("hs_diff")
    url = pg_server.create_database(name, template_db)
    s = SqlSide(url)
    try:
        yield s
    finally:
        s.close()
        pg_server.drop_database(name)


WORLD_BATCH = (Account, Conversation, AddMember, RemoveMember, Post, Edit, Delete, Erase, Link, Revoke, End, InTenant)


def run_scenario(side: SqlSide, scenario: Scenario) -> dict[int, Any]:
    """Apply the scenario to both sides, comparing as it goes. Returns what the model
    said at each search (hit ids), check (rows) and reply (None or SQLSTATE), by step."""
    said: dict[int, Any] = {}
    side.reset()
    weights = side.weights(scenario.weights)
    lexicon = side.lexicon
    world = World()
    batch: list = []
    for step, op in enumerate(scenario.ops):
        if isinstance(op, Search):
            got = side.search(op)
            run = world.runs[op.run]
            kwargs = dict(query=op.query, speaker=op.speaker, after=_t(op.after), before=_t(op.before),
                          limit=op.limit)
            if isinstance(got, str):
                with pytest.raises(msearch.SearchError) as expected:
                    msearch.search(world, run, lexicon, **kwargs)
                assert got in expected.value.sqlstates, (step, op)
                event(f"search: {got}")
                said[step] = got
                continue
            result, audit = got
            sql_hits = result["hits"] or []
            if scenario.weights == "exact":
                outcome = msearch.search(world, run, lexicon, **kwargs)
            else:
                outcome = msearch.search(world, run, lexicon, rank_order=[h["message_id"] for h in sql_hits],
                                         **kwargs)
                assert outcome.exclusions["budget"] == 0, "default weights: keep worlds under the budget"
            said[step] = [h.shown.message_id for h in outcome.hits]
            note(f"step {step}: {op}\n  model hits {[h.shown.message_id for h in outcome.hits]} "
                 f"eligible {outcome.eligible_ids}\n  sql hits {[h['message_id'] for h in sql_hits]}")
            assert [_hit_sql(h) for h in sql_hits] == [_hit_model(h) for h in outcome.hits], (step, op)
            assert (result["status"], result["budget_used"], result["budget_remaining"]) == \
                   (outcome.status, outcome.budget_used, outcome.budget_remaining), (step, op)
            counts = {rule: audit[col] for rule, col in AUDIT_COUNTS.items()}
            assert counts == outcome.exclusions, (step, op)
            assert audit["hit_message_ids"] == [h.shown.message_id for h in outcome.hits], (step, op)
            assert sorted(audit["selected_message_ids"]) == sorted(outcome.selected), (step, op)
            assert len(set(audit["selected_message_ids"])) == len(audit["selected_message_ids"])
            assert (audit["status"], audit["budget_used"], audit["budget_remaining"]) == \
                   (outcome.status, outcome.budget_used, outcome.budget_remaining), (step, op)
            event(f"search: {'hits' if sql_hits else 'no hits'}, {outcome.status}")
            if not outcome.terms:
                event("search: no terms")
            elif not sql_hits and not any(outcome.exclusions.values()):
                event("search: no candidates")
            for rule, n in outcome.exclusions.items():
                if n:
                    event(f"excluded by {rule}")
            if outcome.exclusions["budget"]:
                event("a hit withheld for budget")
            if outcome.budget_remaining == 0:
                event("budget spent (400)")
            if any(h.before or h.after for h in outcome.hits):
                event("neighbours returned")
            if sql_hits:
                check_hard_orderings(world, run, lexicon, outcome.terms, outcome.eligible_ids, sql_hits, weights,
                                     set(outcome.considered_ids) - {h.shown.message_id for h in outcome.hits})
            if scenario.weights == "exact":
                coverage = msearch.rarity_coverage(
                    outcome.terms, [world.messages[m] for m in outcome.eligible_ids], lexicon)
                for h in sql_hits:
                    s = msearch.signals(world, run, world.messages[h["message_id"]])
                    assert h["score"] == pytest.approx(
                        1000 * s["participation"] + 100 * s["conversation"] + 10 * s["actor"]
                        + coverage[h["message_id"]])
        elif isinstance(op, Check):
            got = side.check(op.run)
            try:
                want = delivery.check_delivery(world, world.runs[op.run])
            except delivery.DeliveryError as e:
                want = e.sqlstate
            assert got == want, (step, op)
            said[step] = want
            for reason in sorted({r for _, r in want} if isinstance(want, list) else {want}):
                event(f"check_delivery: {reason}")
        elif isinstance(op, Reply):
            got = side.reply(op)
            run = world.runs[op.run]
            if run.ended:
                want = "HS002"
            else:
                want = "HS005" if delivery.check_delivery(world, run, at(op.sent_at)) else None
            assert got == want, (step, op, delivery.check_delivery(world, run, at(op.sent_at)) if not run.ended else None)
            event(f"reply: {want or 'delivered'}")
            said[step] = want
            if want is None:
                apply(world, op)
        elif isinstance(op, Begin):
            side.world_op(op)
            apply(world, op)
        else:
            # consecutive world operations go in one pipeline: each must succeed
            batch.append(op)
            if step + 1 == len(scenario.ops) or not isinstance(scenario.ops[step + 1], WORLD_BATCH):
                if any(isinstance(b, InTenant) for b in batch):
                    event("another tenant written")
                with side.runtime.pipeline():
                    for b in batch:
                        side.world_op(b)
                for b in batch:
                    apply(world, b)
                batch = []
    return said


# --- the tests ---------------------------------------------------------------


# Shrunk by the leak check (docs/testing.md) with the lineage check dropped: m01 is
# built on m00, written in the direct conversation before p0 (the default
# audience) joined it, so m01 must stay hidden from p0.
LINEAGE_LEAK = Scenario('default', (
    Account(account_id='p0', kind='person'),
    Account(account_id='p1', kind='person'),
    Account(account_id='a0', kind='agent'),
    Conversation(conversation_id='c0', kind='direct'),
    Conversation(conversation_id='c1', kind='direct'),
    Conversation(conversation_id='c2', kind='group'),
    AddMember(conversation_id='c0', account_id='a0', since=0),
    AddMember(conversation_id='c0', account_id='p0', since=1),
    AddMember(conversation_id='c1', account_id='p0', since=0),
    AddMember(conversation_id='c1', account_id='p1', since=0),
    Post(message_id='m00', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=()),
    Post(message_id='m01', conversation_id='c0', author_id='p0', body='river', sent_at=1, sources=('m00',)),
    Post(message_id='m02', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m03', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m04', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m05', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m06', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m07', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Begin(run='r0', agent_id='a0', conversation_id='c0', requester_id='p0', current_message_id='m00', loaded_message_ids=(), audience=None),
    Search(run='r0', query='river', speaker='anyone', after=0, before=0, limit=8),
    Search(run='r0', query='river', speaker='anyone', after=None, before=None, limit=8),
))


# Shrunk from a CI run: a search with limit 0 on an ended run is HS001 in SQL; the
# model had insisted on HS002. The spec does not order the two: either is accepted.
ENDED_AND_BAD_LIMIT = Scenario('default', (
    Account(account_id='p0', kind='person'),
    Account(account_id='p1', kind='person'),
    Account(account_id='a0', kind='agent'),
    Conversation(conversation_id='c0', kind='direct'),
    Conversation(conversation_id='c1', kind='direct'),
    AddMember(conversation_id='c0', account_id='p0', since=0),
    AddMember(conversation_id='c0', account_id='p1', since=0),
    AddMember(conversation_id='c1', account_id='p0', since=0),
    AddMember(conversation_id='c1', account_id='p1', since=0),
    Post(message_id='m00', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=()),
    Post(message_id='m01', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Begin(run='r0', agent_id='a0', conversation_id='c0', requester_id='p0', current_message_id='m00', loaded_message_ids=(), audience=()),
    Search(run='r0', query='river', speaker='anyone', after=0, before=0, limit=8),
    Search(run='r0', query='river', speaker='anyone', after=0, before=0, limit=8),
    Reply(run='r0', message_id='r0reply', body='reply zebra', sent_at=0),
    Search(run='r0', query='river', speaker='anyone', after=0, before=0, limit=8),
    Search(run='r0', query='', speaker='anyone', after=0, before=0, limit=0),
))


# Shrunk by the planted-fault check (docs/testing.md, fault (a)): with the audience
# check weakened to "some audience account may read it", m04 in c1 passed the
# audience rule for (a0, a1, p0) although p0 was never in c1 (a0 and a1, with
# the fewest memberships, read c1; p0, with three, is not where the check starts).
AUDIENCE_OUTSIDER = Scenario('default', (
    Account(account_id='p0', kind='person'), Account(account_id='p1', kind='person'),
    Account(account_id='a0', kind='agent'), Account(account_id='a1', kind='agent'),
    Conversation(conversation_id='c0', kind='group'), Conversation(conversation_id='c1', kind='group'),
    Conversation(conversation_id='c2', kind='direct'),
    AddMember(conversation_id='c0', account_id='p0', since=1), AddMember(conversation_id='c0', account_id='p1', since=0),
    AddMember(conversation_id='c1', account_id='a0', since=0), AddMember(conversation_id='c1', account_id='a1', since=0),
    AddMember(conversation_id='c2', account_id='p0', since=0), RemoveMember(conversation_id='c2', account_id='p0', until=0),
    AddMember(conversation_id='c2', account_id='p0', since=0), AddMember(conversation_id='c2', account_id='p1', since=0),
    Post(message_id='m00', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=()),
    Post(message_id='m01', conversation_id='c0', author_id='p0', body='zebra', sent_at=0, sources=('m00',)),
    Post(message_id='m04', conversation_id='c1', author_id='p0', body='river stone', sent_at=0, sources=('m00',)),
    Begin(run='r0', agent_id='a0', conversation_id='c1', requester_id='p0', current_message_id='m01',
          loaded_message_ids=(), audience=('a0', 'a1', 'p0')),
    Search(run='r0', query='river', speaker='anyone', after=None, before=None, limit=8),
))


# Another tenant with the same ids: its c0 holds the searched word, everyone is
# a member of everything there, and its p0 is an agent; the default tenant's
# run must find nothing of it, its delivery check must not see it, and the
# other tenant's erasure of p0 must leave the default tenant's p0 alone.
TENANT_OVERLAP = Scenario('exact', (
    Account(account_id='p0', kind='person'), Account(account_id='p1', kind='person'),
    Account(account_id='a0', kind='agent'),
    Conversation(conversation_id='c0', kind='group'),
    AddMember(conversation_id='c0', account_id='a0', since=0), AddMember(conversation_id='c0', account_id='p0', since=0),
    Post(message_id='m00', conversation_id='c0', author_id='p0', body='river stone', sent_at=5, sources=()),
    Post(message_id='m01', conversation_id='c0', author_id='p0', body='zebra', sent_at=9, sources=()),
    InTenant('t2', Account(account_id='p0', kind='agent')), InTenant('t2', Account(account_id='p1', kind='person')),
    InTenant('t2', Account(account_id='a0', kind='agent')),
    InTenant('t2', Conversation(conversation_id='c0', kind='group')),
    InTenant('t2', AddMember(conversation_id='c0', account_id='a0', since=0)),
    InTenant('t2', AddMember(conversation_id='c0', account_id='p1', since=0)),
    InTenant('t2', Post(message_id='m00', conversation_id='c0', author_id='p1', body='river river lamp', sent_at=6,
                        sources=())),
    InTenant('t2', Post(message_id='m02', conversation_id='c0', author_id='p1', body='river', sent_at=7, sources=())),
    Begin(run='r0', agent_id='a0', conversation_id='c0', requester_id='p0', current_message_id='m01',
          loaded_message_ids=(), audience=None),
    Search(run='r0', query='river lamp', speaker='anyone', after=None, before=None, limit=8),
    InTenant('t2', Erase(account_id='p0', at=10)),
    InTenant('t2', Delete(message_id='m02', at=10)),
    Search(run='r0', query='river', speaker='anyone', after=None, before=None, limit=8),
    Check(run='r0'),
    Reply(run='r0', message_id='m02', body='reply river', sent_at=11),
))


# Three times the profile's examples: "ci" (100) runs 300 worlds, "deep" (1000) runs 3000.
@settings(max_examples=3 * settings.default.max_examples)
@given(scenario=scenarios())
@example(scenario=LINEAGE_LEAK)
@example(scenario=ENDED_AND_BAD_LIMIT)
@example(scenario=AUDIENCE_OUTSIDER)
@example(scenario=TENANT_OVERLAP)
def test_search_matches_model(side, scenario):
    run_scenario(side, scenario)


# Each world has 400-560 messages: "ci" runs 10, "deep" 100.
@settings(max_examples=max(5, settings.default.max_examples // 10))
@given(scenario=budget_scenarios())
def test_budget_matches_model(side, scenario):
    run_scenario(side, scenario)


# --- hand-written scenarios: what random worlds reach rarely, with the expected
# answers worked out by hand from the spec (so the model is checked too) ---------

# Linking widens a direct conversation, never a group. p0 (the audience)
# is linked to p1, who holds a direct conversation c0 and a group c1 with the agent.
DIRECT_LINKS = Scenario("default", (
    Account("p0", "person"), Account("p1", "person"), Account("a0", "agent"),
    Conversation("c0", "direct"), Conversation("c1", "group"), Conversation("c2", "group"),
    AddMember("c0", "a0", 0), AddMember("c0", "p1", 0),
    AddMember("c1", "a0", 0), AddMember("c1", "p1", 0),
    AddMember("c2", "a0", 0), AddMember("c2", "p0", 0),
    Post("m00", "c0", "p1", "river", 10), Post("m01", "c1", "p1", "river", 10),
    Post("m02", "c2", "p0", "zebra", 20),
    Link("k0", "p0", "p1", 5),
    Begin("r0", "a0", "c2", "p0", "m02"),                    # default audience: p0
    Search("r0", "river"),                                   # step 17: m00 only
    Search("r0", "river", "requester"),                      # step 18: p1 is linked to the requester: m00
    Revoke("k0", 30),
    Check("r0"),                                             # step 20: m00 relied on k0
    Search("r0", "river"),                                   # step 21: nothing now
    Reply("r0", "r0reply", "reply", 40),                     # step 22: blocked
    End("r0"),
    Search("r0", "river"),                                   # step 24: ended run
))


# A default audience is recomputed at delivery. p1 left the destination
# before the run began and rejoins after the search: the evidence must be readable
# by p1 too, and m04's source m03 (in c1, which p1 never joined) is not.
DELIVERY_RECHECK = Scenario("exact", (
    Account("p0", "person"), Account("p1", "person"), Account("a0", "agent"),
    Conversation("c0", "group"), Conversation("c1", "group"),
    AddMember("c0", "a0", 0), AddMember("c0", "p0", 0), AddMember("c0", "p1", 0), RemoveMember("c0", "p1", 20),
    AddMember("c1", "a0", 0), AddMember("c1", "p0", 0),
    Post("m03", "c1", "p0", "stone", 5),
    Post("m04", "c0", "a0", "river", 12, ("m03",)),
    Post("m05", "c0", "p0", "river lamp", 25),
    Post("m06", "c0", "p0", "zebra", 50),
    Begin("r0", "a0", "c0", "p0", "m06"),                    # default audience: p0
    Search("r0", "river"),                                   # step 16: m05 (the requester's), m04; each the other's neighbour
    Check("r0"),                                             # step 17: clean
    AddMember("c0", "p1", 30),
    Check("r0"),                                             # step 19: m04 lineage (p1 not in c1 at 5); m05 audience
    Reply("r0", "r0reply", "reply", 60),                     # step 20: blocked
    Delete("m04", 61),
    Check("r0"),                                             # step 22: m04 deleted first
))


# A reply is checked against who was a member when it was sent. p1 is in the
# destination over [20, 30), after the search and gone before now: check_delivery
# (no reply) passes; a reply sent at 20 (= since) or 29 is blocked, one sent at
# 30 (= until) is delivered.
REPLY_SENT_AT = Scenario("exact", (
    Account("p0", "person"), Account("p1", "person"), Account("a0", "agent"),
    Conversation("c0", "group"), Conversation("c1", "direct"),
    AddMember("c0", "a0", 0), AddMember("c0", "p0", 0), AddMember("c1", "a0", 0), AddMember("c1", "p0", 0),
    Post("m01", "c1", "p0", "zebra", 5),
    Post("m02", "c0", "p0", "lamp", 10),
    Begin("r0", "a0", "c0", "p0", "m02"),                    # default audience: p0
    Search("r0", "zebra"),                                   # step 12: m01
    AddMember("c0", "p1", 20), RemoveMember("c0", "p1", 30),
    Check("r0"),                                             # step 15: clean, p1 has left
    Reply("r0", "r0a", "reply", 20),                         # step 16: blocked (p1 joined at 20)
    Reply("r0", "r0b", "reply", 29),                         # step 17: blocked
    Reply("r0", "r0c", "reply", 30),                         # step 18: delivered (p1 left at 30)
))


@pytest.mark.parametrize("scenario", [LINEAGE_LEAK, ENDED_AND_BAD_LIMIT, DIRECT_LINKS, DELIVERY_RECHECK,
                                      AUDIENCE_OUTSIDER, REPLY_SENT_AT],
                         ids=["lineage_leak", "ended_and_bad_limit", "direct_links", "delivery_recheck",
                              "audience_outsider", "reply_sent_at"])
def test_hand_scenarios_match_model(side, scenario):
    said = run_scenario(side, scenario)
    if scenario is LINEAGE_LEAK:
        assert said[19] == [] and said[20] == []
    elif scenario is ENDED_AND_BAD_LIMIT:
        assert said[14] is None  # the reply was delivered: the run has ended
        assert said[15] == "HS002" and said[16] in ("HS001", "HS002")
    elif scenario is AUDIENCE_OUTSIDER:
        assert said[19] == []  # p0 never read c1
    elif scenario is REPLY_SENT_AT:
        assert said[12] == ["m01"]
        assert said[15] == []
        assert (said[16], said[17], said[18]) == ("HS005", "HS005", None)
    elif scenario is DIRECT_LINKS:
        assert said[17] == ["m00"]
        assert said[18] == ["m00"]
        assert said[20] == [("m00", "proof_revoked")]
        assert said[21] == []
        assert said[22] == "HS005"
        assert said[24] == "HS002"
    else:
        assert said[16] == ["m05", "m04"]
        assert said[17] == []
        assert said[19] == [("m04", "lineage"), ("m05", "audience")]
        assert said[20] == "HS005"
        assert said[22] == [("m04", "deleted"), ("m05", "audience")]
