"""``history._score`` restated in Python over the lexemes search reads, to try a ranking change in seconds.

A ranking change measured through search costs a full ``history-search
eval`` (minutes); the same change measured here costs seconds, on the same
tokens: each turn's lexemes and counts from its row of
``history.message_search_documents`` and the question's terms as search
computes them. ``rank`` is the shipped formula (db/functions/_score.sql) for
one LoCoMo conversation seen whole by its two people: every turn is
eligible, the run's conversation is the hit's, both people wrote in it;
every term is an alternative of its own and every position counts alike, so
a question with a hyphenated word (an identifier, matched whole or by all its
parts, whose parts are labelled D) is where it can differ. The eval reports
the share of questions whose first 8 it ranks exactly as search did
(``results.json``: ``restatement_agreement``); docs/relevance.md reports
what was tried with it.

``Params.neighbourhood`` is the one experiment kept here, measured and not
built (docs/relevance.md, "The next step"): each message also scores that
weight times the best relative text score of the matches within two
messages of it, and with ``joined`` the messages next to the first
``joined`` matches are ranked too, with no text score of their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Turn:
    key: str
    speaker: str
    sent_at: datetime
    lexemes: dict[str, int]  # lexeme -> number of positions


@dataclass(frozen=True)
class Params:
    k1: float = 0.8
    b: float = 0.5
    text: float = 1.0
    coverage: float = 0.5
    actor: float = 0.05
    conversation: float = 0.1
    participation: float = 0.05
    recency: float = 0.1
    recency_half_life: timedelta = timedelta(days=180)
    named_speaker: float = 0.2
    name_term: float = 0.3
    session: float = 0.2
    session_gap: timedelta = timedelta(minutes=30)
    period: float = 0.3
    period_half_life: timedelta = timedelta(days=3)
    tells_time: float = 0.2
    window_coverage: float = 0.5
    feedback: float = 0.2
    neighbourhood: float = 0.0
    joined: int = 0

    @classmethod
    def from_settings(cls, s: dict[str, object]) -> "Params":
        """From a row of history.search_settings (``to_jsonb``; intervals as PostgreSQL prints them)."""
        def f(k: str) -> float:
            return float(str(s[k]))

        def iv(k: str) -> timedelta:
            return _interval(str(s[k]))
        return cls(k1=f("bm25_k1"), b=f("bm25_b"), text=f("text_weight"), coverage=f("coverage_weight"),
                   actor=f("actor_weight"), conversation=f("conversation_weight"),
                   participation=f("participation_weight"), recency=f("recency_weight"),
                   recency_half_life=iv("recency_half_life"), named_speaker=f("named_speaker_weight"),
                   name_term=f("name_term_weight"), session=f("session_weight"), session_gap=iv("session_gap"),
                   period=f("period_weight"), period_half_life=iv("period_half_life"),
                   tells_time=f("tells_time_weight"), window_coverage=f("window_coverage_weight"),
                   feedback=f("feedback_weight"))


def _interval(text: str) -> timedelta:
    """'3 days', '180 days', '00:30:00', '1 day 02:00:00' (PostgreSQL's default interval output)."""
    total = timedelta(0)
    for part in text.split(" days") if " days" in text else text.split(" day"):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            h, m, sec = part.split(":")
            total += timedelta(hours=int(h), minutes=int(m), seconds=float(sec))
        else:
            total += timedelta(days=int(part))
    return total


def _exact(x: float) -> float:
    # _score.sql rounds to multiples of 2^-32 so that sums do not depend on order and equal matches tie
    return round(x * 4294967296) / 4294967296


def _tf(positions: int) -> float:
    # ts_rank's measure of one term's positions, scaled so that one occurrence is 1 (_score.sql)
    return round(sum(1.0 / (j + 1) ** 2 for j in range(positions)) * 1e6) / 1e6


def _decay(distance: timedelta, half_life: timedelta) -> float:
    return float(0.5 ** min(1000.0, max(0.0, distance / half_life)))


def rank(turns: list[Turn], terms: list[str], name_terms: set[str], named_speakers: set[str], requester: str,
         period: tuple[datetime, datetime] | None, time_words: set[str] | None, now: datetime, p: Params,
         limit: int = 20) -> list[str]:
    """The keys of the first ``limit`` turns, best first, as history._score and search order them.

    ``turns``: the conversation in order; ``time_words``: the analysed time words when the query asks
    when (history._query_asks_when), else None."""
    match = [i for i, t in enumerate(turns) if any(x in t.lexemes for x in terms)]
    if not match:
        return []
    n = len(match)
    avg = max(sum(len(turns[i].lexemes) for i in match) / n, 1.0)
    idf: dict[str, float] = {}
    for x in terms:
        df = sum(1 for i in match if x in turns[i].lexemes)
        if df:
            idf[x] = _exact(math.log(1 + (n - df + 0.5) / (df + 0.5)) * (p.name_term if x in name_terms else 1.0))
    total_idf = sum(idf.values())
    bm25 = [0.0] * len(turns)
    rarity = [0.0] * len(turns)
    for i in match:
        t = turns[i]
        for x, w in idf.items():
            if x in t.lexemes:
                f = _tf(t.lexemes[x])
                bm25[i] += _exact(w * f * (p.k1 + 1) / (f + p.k1 * (1 - p.b + p.b * len(t.lexemes) / avg)))
                rarity[i] += w
    best = max(bm25) or 1.0
    rel = [x / best for x in bm25]
    ranked = set(match)
    if p.joined:
        for i in sorted(match, key=lambda i: -rel[i])[:p.joined]:
            ranked.update(j for j in range(i - 2, i + 3) if 0 <= j < len(turns))
    scored: list[tuple[float, datetime, str]] = []
    index = {t.key: i for i, t in enumerate(turns)}
    for i in ranked:
        t = turns[i]
        session = max((rel[j] for j in match if j != i and abs(turns[j].sent_at - t.sent_at) <= p.session_gap),
                      default=0.0)
        near = max((rel[j] for j in range(i - 2, i + 3) if j != i and 0 <= j < len(turns)), default=0.0)
        score = (p.text * rel[i] + p.coverage * (rarity[i] / total_idf if total_idf else 0.0)
                 + p.actor * (t.speaker == requester) + p.conversation + p.participation
                 + p.recency * _decay(now - t.sent_at, p.recency_half_life)
                 + p.named_speaker * (t.speaker in named_speakers) + p.session * session
                 + p.neighbourhood * near
                 + (p.tells_time if time_words is not None and time_words & t.lexemes.keys() else 0.0))
        if period is not None:
            distance = max(period[0] - t.sent_at, t.sent_at - period[1], timedelta(0))
            score += p.period * _decay(distance, p.period_half_life)
        scored.append((score, t.sent_at, t.key))
    # equal scores: sent_at descending, then message id
    scored.sort(key=lambda r: (-r[0], -r[1].timestamp(), r[2]))
    if p.window_coverage or p.feedback:
        scored = _window_stage(turns, [(s, at, k, index[k]) for s, at, k in scored[:POOL]], terms, idf, total_idf, p)
    return [k for _, _, k in scored[:limit]]


# history._ranking_pass: the window stage reads the first POOL matches and the windows of the first REACH.
POOL = 100
REACH = 30


def _window_stage(turns: list[Turn], first: list[tuple[float, datetime, str, int]], terms: list[str],
                  idf: dict[str, float], total_idf: float, p: Params) -> list[tuple[float, datetime, str]]:
    """history._window_scores: ``first`` the first matches best first (score, sent_at, key, index in
    ``turns``); the same matches re-ranked by window coverage and feedback, best first."""
    def window(i: int) -> list[int]:
        return [j for j in range(i - 2, i + 3) if 0 <= j < len(turns)]

    covered: dict[int, float] = {}
    for _, _, _, i in first[:REACH]:
        words = set().union(*(turns[j].lexemes.keys() & idf.keys() for j in window(i)))
        covered[i] = p.window_coverage * sum(idf[t] for t in words) / total_idf if total_idf else 0.0
    lifted = sorted(((s + covered.get(i, 0.0), at, k, i) for s, at, k, i in first),
                    key=lambda r: (-r[0], -r[1].timestamp(), r[2]))
    lent: dict[str, float] = {}
    for s, _, _, i in lifted[:2]:
        lends = s / lifted[0][0] if lifted[0][0] else 1.0
        length = sum(c for j in window(i) for c in turns[j].lexemes.values())
        for j in window(i):
            for t, c in turns[j].lexemes.items():
                if t not in terms:
                    lent[t] = lent.get(t, 0.0) + _exact(lends * c / length)
    n = len(first)
    spread = {t: sum(1 for _, _, _, i in first if t in turns[i].lexemes) for t in lent}
    weighted = {t: _exact(v * math.log(1 + (n - spread[t] + 0.5) / (spread[t] + 0.5)))
                for t, v in lent.items() if spread[t] >= 2}
    expansion = sorted(weighted.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    lift = {i: sum(v for t, v in expansion if t in turns[i].lexemes) for _, _, _, i in first}
    best = max(lift.values(), default=0.0)
    out = [(s + (p.feedback * lift[i] / best if p.feedback and best else 0.0), at, k) for s, at, k, i in lifted]
    out.sort(key=lambda r: (-r[0], -r[1].timestamp(), r[2]))
    return out
