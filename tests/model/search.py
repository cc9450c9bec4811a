"""The search (and the audit's exclusion counts), without the ranking formula.

What a call of ``search_history`` must return, decided from the world, the
run and the arguments:

* the query's alternatives (the lexemes of its text, see ``Lexicon``);
* the candidates: live messages matching any alternative in conversations the
  agent has ever been a member of (docs/decisions.md, "Candidates");
* each candidate's first failed rule in the audit's order: speaker, time,
  perspective, audience, lineage, alive, in context; the rest are eligible;
  the first four are counted over the newest MAX_COUNTED candidates only
  (newest by sent_at, then message id); the ranking cap MAX_CANDIDATES is
  above any world the scenarios build, and the model refuses to guess past it;
* the top ``limit`` eligible candidates in rank order (the order comes from a
  ``rank_key`` the caller supplies: ranking is compared separately);
* two eligible neighbours before and after each, nearest first, in
  conversation order ``(sent_at, message_id)``;
* admission in rank order within the run's 400 distinct evidence messages,
  neighbours in the order before1, after1, before2, after2; the status and the
  budget figures; the run's evidence after the call.

Text analysis is the only thing borrowed from PostgreSQL: ``Lexicon`` asks a
plain connection for the lexemes a message or a query has, from the
database's one analysis (``history._document_vector``/``_query_terms``). It is
taken as given here; its own tests are db/tests/test_text_analysis.sql and
tests/test_findability.py.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Callable

from . import delivery, eligibility
from .world import BUDGET, Message, Run, World

RULES = ("speaker", "time", "perspective", "audience", "lineage", "alive", "in_context", "budget")
MAX_LIMIT = 20
DEFAULT_LIMIT = 8
# docs/decisions.md, "A search examines a bounded number of candidates": the
# exclusion counts of speaker, time, perspective and audience cover the newest
# MAX_COUNTED candidates; the lineage and in-context counts cover the newest
# MAX_CANDIDATES that pass speaker, time and the windows; ranking covers the
# newest MAX_CANDIDATES eligible ones (every rule applies before the cap).
MAX_COUNTED = 500
MAX_CANDIDATES = 2000
MAX_QUERY_CHARS = 4000
MAX_QUERY_TERMS = 32


class Lexicon:
    """Lexemes of texts, taken as given from the database's text analysis (cached).

    Documents and queries are analysed by one function pair in SQL
    (``history._document_vector``, ``_query_terms`` and ``_query_tsquery``, docs/text-analysis.md);
    the model asks for their results instead of re-implementing the tokeniser,
    so it checks everything *after* analysis (candidates, eligibility,
    ranking order, budget, audit) and db/tests/test_text_analysis.sql and
    tests/test_findability.py check the analysis itself.
    """

    def __init__(self, conn, config: str = "english"):
        self.conn = conn
        self.config = config
        self._lexemes: dict[str, dict[str, int]] = {}
        self._matches: dict[tuple[str, str], bool] = {}

    def lexemes(self, text: str) -> dict[str, int]:
        """lexeme -> number of positions it has in the text's document vector."""
        if text not in self._lexemes:
            rows = self.conn.execute(
                "SELECT lexeme, coalesce(cardinality(positions), 0) "
                "FROM unnest(history._document_vector(%s, %s::regconfig))",
                (text, self.config),
            ).fetchall()
            self._lexemes[text] = {lexeme: n for lexeme, n in rows}
        return self._lexemes[text]

    def matching(self, query: str, texts: list[str]) -> set[str]:
        """The texts whose document matches the query (``history._query_tsquery``: the OR of its
        alternatives, a typed identifier whole or all its parts)."""
        query = query[:MAX_QUERY_CHARS]
        unknown = sorted({t for t in texts if (query, t) not in self._matches})
        if unknown:
            rows = self.conn.execute(
                "SELECT t, coalesce(history._document_vector(t, %s::regconfig) @@ q.q, false) "
                "FROM unnest(%s::text[]) t, (SELECT history._query_tsquery(%s, history._query_languages(), %s) AS q) q",
                (self.config, unknown, query, MAX_QUERY_TERMS),
            ).fetchall()
            for text, ok in rows:
                self._matches[(query, text)] = bool(ok)
        return {t for t in texts if self._matches[(query, t)]}

    def query_terms(self, query: str) -> list[str]:
        """The alternatives: distinct whole-token lexemes, first seen first, at most 32 (a longer query than
        4000 characters is refused before it gets here)."""
        return list(self.conn.execute(
            "SELECT history._query_terms(%s, history._query_languages(), %s)",
            (query[:MAX_QUERY_CHARS], MAX_QUERY_TERMS),
        ).fetchone()[0])


@dataclass
class Shown:
    """A returned message (hit or neighbour), as the spec says it is shown."""
    message_id: str
    conversation_id: str
    sent_at: datetime
    speaker_id: str
    speaker_role: str
    body: str


@dataclass
class Hit:
    shown: Shown
    matched_terms: list[str]
    signals: dict[str, int]  # actor, conversation, participation: 0 or 1
    matched_count: int
    before: list[Shown] = field(default_factory=list)
    after: list[Shown] = field(default_factory=list)


@dataclass
class Outcome:
    status: str
    budget_used: int
    budget_remaining: int
    hits: list[Hit]
    selected: list[str]  # every admitted message id, in admission order
    exclusions: dict[str, int]
    terms: list[str]
    eligible_ids: list[str]  # every eligible candidate (before limit and budget)
    considered_ids: list[str]  # the top `limit` eligible ones, in rank order


class SearchError(Exception):
    """The call fails. ``sqlstates``: every error that applies (the spec does not
    say which of several wins, e.g. a bad limit on an ended run)."""

    def __init__(self, sqlstates: set[str]):
        super().__init__(sorted(sqlstates))
        self.sqlstates = sqlstates


def speaker_role(world: World, run: Run, author_id: str) -> str:
    if author_id in world.linked(run.requester_id):
        return "requester"
    if author_id == run.agent_id:
        return "you"
    return "other"


def shown(world: World, run: Run, m: Message) -> Shown:
    return Shown(m.message_id, m.conversation_id, m.sent_at, m.author_id, speaker_role(world, run, m.author_id), m.body)


def visible_to_audience(world: World, run: Run, m: Message) -> bool:
    """A message the run's audience may see, as ranking signals count them: alive, and passing
    perspective, audience and lineage (being in the run's context does not hide it)."""
    return eligibility.first_failed_rule(world, run, m) in (None, "in_context")


def signals(world: World, run: Run, m: Message) -> dict[str, int]:
    """Every signal counts only messages the audience may see: participation is a visible message
    of the requester (or a linked account) in the hit's conversation, never a hidden or deleted one."""
    requester_accounts = world.linked(run.requester_id)
    return {
        "actor": int(m.author_id in requester_accounts),
        "conversation": int(m.conversation_id == run.conversation_id),
        "participation": int(any(o.conversation_id == m.conversation_id and o.author_id in requester_accounts
                                 and visible_to_audience(world, run, o) for o in world.messages.values())),
    }


def rarity_coverage(terms: list[str], eligible: list[Message], lexicon: Lexicon) -> dict[str, float]:
    """Coverage before its weight, as history._score computes it: the share of the query's rarity
    (idf over the eligible candidates, rounded to 2^-32) that each message matches."""
    n = len(eligible)
    has = {m.message_id: set(lexicon.lexemes(m.body)) for m in eligible}
    df = {t: sum(t in h for h in has.values()) for t in terms}
    idf = {t: math.floor(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * 4294967296 + 0.5) / 4294967296
           for t in terms if df[t]}
    total = sum(idf.values())
    return {mid: (sum(idf[t] for t in idf if t in h) / total if total else 0.0) for mid, h in has.items()}


# The shipped session_gap: the session signal of a match is the best text score
# among the other eligible matches of its conversation at most this far apart.
SESSION_GAP = timedelta(minutes=30)


def session_of(world: World, m: Message, eligible_ids: list[str], gap: timedelta = SESSION_GAP) -> set[str]:
    """The other eligible matches of m's session: same conversation, sent at most ``gap`` before or after."""
    return {e for e in eligible_ids if e != m.message_id
            and world.messages[e].conversation_id == m.conversation_id
            and abs(world.messages[e].sent_at - m.sent_at) <= gap}


def exact_rank_key(world: World, run: Run, terms: list[str], lexicon: Lexicon,
                   eligible: list[Message]) -> Callable[[Message], tuple]:
    """Rank order under the test's "exact" weights (text 0, coverage 1, actor 10, conversation 100,
    participation 1000, recency 0): participation, conversation, actor, coverage (the share of the
    query's rarity matched), then sent_at descending, then message id (decisions: a weighted sum;
    equal scores: sent_at descending, then id)."""
    coverage = rarity_coverage(terms, eligible, lexicon)

    def key(m: Message):
        s = signals(world, run, m)
        return (-s["participation"], -s["conversation"], -s["actor"], -coverage[m.message_id],
                -m.sent_at.timestamp(), m.message_id)

    return key


def first_filter_failed(world: World, run: Run, m: Message, speaker: str, after, before) -> str | None:
    if speaker == "requester" and m.author_id not in world.linked(run.requester_id):
        return "speaker"
    if speaker == "you" and m.author_id != run.agent_id:
        return "speaker"
    if after is not None and m.sent_at < after:
        return "time"
    if before is not None and m.sent_at >= before:
        return "time"
    return None


def neighbours(world: World, run: Run, hit: Message) -> tuple[list[Message], list[Message]]:
    """Up to two eligible messages each side of the hit in its conversation, nearest first."""
    same = [m for m in world.messages.values()
            if m.conversation_id == hit.conversation_id and m.message_id != hit.message_id
            and eligibility.eligible(world, run, m)]
    here = (hit.sent_at, hit.message_id)
    earlier = sorted((m for m in same if (m.sent_at, m.message_id) < here),
                     key=lambda m: (m.sent_at, m.message_id), reverse=True)
    later = sorted((m for m in same if (m.sent_at, m.message_id) > here),
                   key=lambda m: (m.sent_at, m.message_id))
    return earlier[:2], later[:2]


def search(world: World, run: Run, lexicon: Lexicon, query, speaker="anyone", after=None, before=None,
           limit=DEFAULT_LIMIT, rank_key: Callable[[Message], tuple] | None = None,
           rank_order: list[str] | None = None) -> Outcome:
    """One call of search_history. Changes run.evidence as the call must.

    Rank order: ``rank_key`` (sort key, smallest first), or ``rank_order`` (the
    eligible ids in the order the SQL returned them; only sound when nothing is
    withheld for budget), or the exact-weights key by default.
    """
    errors = set()
    if run.ended:
        errors.add("HS002")
    speaker = "anyone" if speaker is None else speaker
    limit = DEFAULT_LIMIT if limit is None else limit
    # A query over MAX_QUERY_CHARS characters is refused before anything else.
    if query is None or len(query) > MAX_QUERY_CHARS or speaker not in ("anyone", "requester", "you") or limit < 1 \
            or (after is not None and before is not None and after > before):
        errors.add("HS001")
    if errors:
        raise SearchError(errors)
    limit = min(limit, MAX_LIMIT)

    terms = lexicon.query_terms(query)
    exclusions = {rule: 0 for rule in RULES}
    eligible: list[Message] = []
    if terms:
        live = [m for m in world.messages.values() if m.alive and world.ever_member(run.agent_id, m.conversation_id)]
        matching = lexicon.matching(query, [m.body for m in live])
        candidates = sorted(
            (m for m in live if m.body in matching),
            key=lambda m: (m.sent_at, m.message_id), reverse=True)
        for position, m in enumerate(candidates):
            rule = first_filter_failed(world, run, m, speaker, after, before) \
                or eligibility.first_failed_rule(world, run, m)
            if rule in ("speaker", "time", "perspective", "audience"):
                if position < MAX_COUNTED:
                    exclusions[rule] += 1
            elif rule is None:
                eligible.append(m)
            else:
                exclusions[rule] += 1
        if len(eligible) + exclusions["lineage"] + exclusions["alive"] + exclusions["in_context"] > MAX_CANDIDATES:
            raise NotImplementedError("a world beyond the ranking cap: the model does not decide which conversations it covers")

    if rank_order is not None:
        position = {mid: i for i, mid in enumerate(rank_order)}
        ranked = sorted(eligible, key=lambda m: position.get(m.message_id, len(position)))
    else:
        key = rank_key or exact_rank_key(world, run, terms, lexicon, eligible)
        ranked = sorted(eligible, key=key)
    considered = ranked[:limit]

    # Admission, in rank order, while the budget lasts.
    remaining = BUDGET - len(run.evidence)
    selected: list[str] = []
    withheld = False
    hits: list[Hit] = []

    def admit(mid: str) -> bool:
        nonlocal remaining, withheld
        if mid in run.evidence or mid in selected:
            if mid not in selected:
                selected.append(mid)
            return True
        if remaining == 0:
            withheld = True
            return False
        remaining -= 1
        selected.append(mid)
        return True

    for m in considered:
        if not admit(m.message_id):
            exclusions["budget"] += 1
            continue
        earlier, later = neighbours(world, run, m)
        hit = Hit(shown(world, run, m),
                  [t for t in terms if t in lexicon.lexemes(m.body)],
                  signals(world, run, m),
                  len(set(terms) & set(lexicon.lexemes(m.body))))
        slots = [(earlier, 0, hit.before), (later, 0, hit.after), (earlier, 1, hit.before), (later, 1, hit.after)]
        for side, i, out in slots:
            if i < len(side) and admit(side[i].message_id):
                out.append(shown(world, run, side[i]))
        hits.append(hit)

    for mid in selected:
        run.evidence.setdefault(mid, set()).update(delivery.relied_proofs(world, run, world.messages[mid]))
    used = len(run.evidence)
    status = "search_budget_exhausted" if remaining == 0 or withheld else "ok"
    assert used == BUDGET - remaining
    return Outcome(status, used, BUDGET - used, hits, selected, exclusions, terms,
                   [m.message_id for m in ranked], [m.message_id for m in considered])
