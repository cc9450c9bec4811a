"""A fast experiment loop for the ranking: history._score restated in Python, both date variants.

    PYTHONPATH=pyclient .venv/bin/python scripts/relevance_loop.py dump "$LOCOMO_DIR" /tmp/lexemes.pkl  # ~5 s
    PYTHONPATH=pyclient .venv/bin/python scripts/relevance_loop.py run /tmp/lexemes.pkl [VARIANT ...]  # ~9 s each
    PYTHONPATH=pyclient .venv/bin/python scripts/relevance_loop.py oracle /tmp/lexemes.pkl
    PYTHONPATH=pyclient .venv/bin/python scripts/relevance_loop.py conversations /tmp/lexemes.pkl  # ~2 min

``dump`` loads the conversations into a throwaway cluster once (LoCoMo's dates; the dates ending
yesterday are the same turns moved) and stores what the restatement reads: each turn's lexemes from
``history.message_search_documents``, each question's terms, period and time words as search computes
them. ``run`` ranks every question with history._score's formula (restatement.rank's, component by
component, without the window stage: the variants below were measured against that base;
``wc_first30+fb_first100`` is the window stage that ships since) and then with a variant (VARIANTS below;
none = that base), and prints R@8 hits / context R@8 over categories 1-4 for both date variants, per
category, and every category where a figure is below BM25's on the same lexemes. docs/relevance.md
("Context recall", "Hits recall") reports what the variants gave. The restatement differs from search
only where search matches an identifier (a hyphenated word or a number), about 1 question in 15 at the
edge of the first 8. ``conversations`` prints hits R@8 per conversation and date variant for BM25,
the ranking that ships (the window stage included) and that ranking with each weight at 0: whether a
signal helps in every conversation or in a few (docs/relevance.md, "Which signals carry").
"""

from __future__ import annotations

import math
import pickle
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from history_search.relevance import restatement as R
from history_search.relevance.bm25 import BM25

Scores = dict[int, float]


def dump(data: str, out: str) -> None:
    import psycopg

    from history_search.cluster import ThrowawayCluster
    from history_search.migrations import apply_migrations
    from history_search.relevance import locomo, runner

    convs = locomo.load_dir(Path(data))
    res: dict[str, Any] = {"convs": []}
    with ThrowawayCluster() as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE history_eval")
        dsn = cluster.dsn_for("history_eval")
        apply_migrations(dsn)
        with psycopg.connect(dsn, autocommit=True) as connection:
            conn: Any = connection
            now = conn.execute("SELECT now()").fetchone()[0]
            res["now"] = now
            res["settings"] = conn.execute("SELECT to_jsonb(s) - 'singleton' FROM history.search_settings s").fetchone()[0]
            for conv in convs:
                ids = runner.load_conversation(conn, "loop", "locomo", conv, timedelta(0))
                docs = runner._documents(conn, ids, conv)
                names = {s: set(conn.execute(runner.QUERY_TERMS_SQL, {"q": s}).fetchone()[0]) for s in conv.speakers}
                qs = []
                for q in conv.questions:
                    if not q.evidence:
                        continue
                    terms = conn.execute(runner.QUERY_TERMS_SQL, {"q": q.question}).fetchone()[0]
                    lower, upper, asks_when, _ = conn.execute(runner.QUESTION_SQL, {"q": q.question}).fetchone()
                    qs.append(dict(category=q.category, evidence=set(q.evidence), terms=terms,
                                   period=(lower, upper) if lower is not None else None,
                                   time_words=None if asks_when is None else set(runner._QUOTED.findall(asks_when)),
                                   requester=conv.speakers[q.index % 2]))
                res["convs"].append(dict(names=names, shift=(now - timedelta(days=1)) - conv.turns[-1].sent_at,
                                         turns=[(t.dia_id, t.speaker, t.sent_at) for t in conv.turns],
                                         docs=docs, qs=qs))
    with open(out, "wb") as f:
        pickle.dump(res, f)


# ------------------------------------------------------------------ the shipped formula, by component


class Question:
    """One question against one conversation in one date variant: the shipped components and scores."""

    def __init__(self, turns: list[R.Turn], q: dict[str, Any], names: dict[str, set[str]], now: Any, p: R.Params):
        self.turns, self.q, self.p, self.now = turns, q, p, now
        terms = q["terms"]
        self.name_terms = {t for s in names.values() for t in s} & set(terms)
        self.named = {s for s, n in names.items() if n & set(terms)}
        self.match = [i for i, t in enumerate(turns) if any(x in t.lexemes for x in self.retrieving(terms))]
        n = len(self.match)
        self.idf: dict[str, float] = {}
        self.rel = [0.0] * len(turns)
        self.rarity = [0.0] * len(turns)
        self.total_idf = 0.0
        if not n:
            self.sc: Scores = {}
            return
        avg = max(sum(len(turns[i].lexemes) for i in self.match) / n, 1.0)
        for x in terms:
            df = sum(1 for i in self.match if x in turns[i].lexemes)
            if df:
                self.idf[x] = R._exact(math.log(1 + (n - df + 0.5) / (df + 0.5))
                                       * (p.name_term if x in self.name_terms else 1.0) * self.weigh(x))
        self.total_idf = sum(self.idf.values())
        bm25 = [0.0] * len(turns)
        for i in self.match:
            t = turns[i]
            for x, w in self.idf.items():
                if x in t.lexemes:
                    f = R._tf(t.lexemes[x])
                    bm25[i] += R._exact(w * f * (p.k1 + 1) / (f + p.k1 * (1 - p.b + p.b * len(t.lexemes) / avg)))
                    self.rarity[i] += w
        best = max(bm25) or 1.0
        self.rel = [x / best for x in bm25]
        self.sc = {i: self.score(i, with_text=True) for i in self.match}

    def retrieving(self, terms: list[str]) -> list[str]:
        """The terms a candidate must match one of: all of them in the shipped formula."""
        return terms

    def weigh(self, term: str) -> float:
        """A factor on the term's rarity: 1 in the shipped formula (scripts/wordnet_expansion.py sets others)."""
        return 1.0

    def cov(self, i: int) -> float:
        return self.rarity[i] / self.total_idf if self.total_idf else 0.0

    def score(self, i: int, with_text: bool) -> float:
        """The shipped total of turn i; without the text and coverage components for a non-match."""
        p, t, q = self.p, self.turns[i], self.q
        s: float
        session = max((self.rel[j] for j in self.match
                       if j != i and abs(self.turns[j].sent_at - t.sent_at) <= p.session_gap), default=0.0)
        s = (p.actor * (t.speaker == q["requester"]) + p.conversation + p.participation
             + p.recency * R._decay(self.now - t.sent_at, p.recency_half_life)
             + p.named_speaker * (t.speaker in self.named) + p.session * session
             + (p.tells_time if q["time_words"] is not None and q["time_words"] & t.lexemes.keys() else 0.0))
        if with_text:
            s += p.text * self.rel[i] + p.coverage * self.cov(i)
        if q["period"] is not None:
            distance = max(q["period"][0] - t.sent_at, t.sent_at - q["period"][1], timedelta(0))
            s += p.period * R._decay(distance, p.period_half_life)
        return s

    def order(self, sc: Scores) -> list[int]:
        return sorted(sc, key=lambda i: (-sc[i], -self.turns[i].sent_at.timestamp(), self.turns[i].key))

    def window(self, i: int, radius: int = 2) -> range:
        return range(max(0, i - radius), min(len(self.turns), i + radius + 1))

    def terms_in(self, i: int) -> set[str]:
        return self.turns[i].lexemes.keys() & self.idf.keys()


# ------------------------------------------------------------------ the variants (each alone)


def window_coverage(x: Question, sc: Scores, w: float = 0.2, extra: bool = False) -> Scores:
    """+ w x the rarity share of the query's terms matched anywhere in the match's window (it and the
    matches within two messages); extra: only what the window adds to the match's own coverage."""
    ms = set(x.match)
    out = dict(sc)
    for i in x.match:
        covered: set[str] = set()
        for j in x.window(i):
            if j in ms:
                covered |= x.terms_in(j)
        wc = sum(x.idf[t] for t in covered) / (x.total_idf or 1)
        out[i] += w * (wc - x.cov(i) if extra else wc)
    return out


def window_coverage_rows(x: Question, sc: Scores, w: float = 0.5, rows: int = 2) -> Scores:
    """window_coverage over the candidates alone (what a window function over them computes): the
    matches of the same conversation within `rows` rows of the match in time order and within
    session_gap of it."""
    ms = sorted(x.match, key=lambda i: (x.turns[i].sent_at, x.turns[i].key))
    out = dict(sc)
    for r, i in enumerate(ms):
        covered: set[str] = set()
        for j in ms[max(0, r - rows):r + rows + 1]:
            if abs(x.turns[j].sent_at - x.turns[i].sent_at) <= x.p.session_gap:
                covered |= x.terms_in(j)
        out[i] += w * sum(x.idf[t] for t in covered) / (x.total_idf or 1)
    return out


def window_coverage_first(x: Question, sc: Scores, w: float = 0.5, first: int = 20) -> Scores:
    """window_coverage for the first `first` matches by the shipped score only (what a neighbour walk
    over them before the final order computes): the rarity share of the query's terms in the match and
    the two turns each side of it; then feedback from their windows."""
    out = dict(sc)
    for i in x.order(sc)[:first]:
        covered: set[str] = set()
        for j in x.window(i):
            covered |= x.terms_in(j)
        out[i] += w * sum(x.idf[t] for t in covered) / (x.total_idf or 1)
    return out


def feedback_first(x: Question, sc: Scores, w: float = 0.2, k: int = 2, m: int = 5, first: int | None = None
                   ) -> Scores:
    """feedback with the expansion terms' rarity over the first `first` matches only (None: all)."""
    if first is None:
        return feedback(x, sc, w, k, m)
    keep = x.order(sc)[:first]
    saved = x.match
    x.match = keep
    try:
        out = feedback(x, {i: sc[i] for i in keep}, w, k, m)
    finally:
        x.match = saved
    return {i: out.get(i, s) for i, s in sc.items()}


def capped_neighbour(x: Question, sc: Scores, w: float = 0.2) -> Scores:
    """+ w x min(the best relative text within two messages, the match's own): a neighbour's strength
    counts only up to the match's own, so it reorders matches of comparable text only."""
    ms = set(x.match)
    return {i: s + w * min(x.rel[i], max((x.rel[j] for j in x.window(i) if j != i and j in ms), default=0.0))
            for i, s in sc.items()}


def feedback(x: Question, sc: Scores, w: float = 0.2, k: int = 3, m: int = 10) -> Scores:
    """Pseudo-relevance feedback (RM3-like): the m terms of most weight in the windows of the first k
    matches (frequency in the window x the match's score relative to the first), weighted by rarity over
    the candidates (present in 2+), not query terms; + w x a candidate's share of the best such score."""
    order = x.order(sc)[:k]
    if not order:
        return sc
    fb: defaultdict[str, float] = defaultdict(float)
    for i in order:
        docs = [x.turns[j].lexemes for j in x.window(i)]
        length = sum(sum(d.values()) for d in docs) or 1
        for d in docs:
            for t, c in d.items():
                fb[t] += sc[i] / sc[order[0]] * c / length
    df: Counter[str] = Counter(t for i in x.match for t in x.turns[i].lexemes)
    n = len(x.match)
    weighted = {t: v * math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                for t, v in fb.items() if t not in x.q["terms"] and df[t] >= 2}
    expansion = dict(sorted(weighted.items(), key=lambda kv: -kv[1])[:m])
    es = {i: sum(v for t, v in expansion.items() if t in x.turns[i].lexemes) for i in x.match}
    top = max(es.values(), default=0.0) or 1.0
    return {i: s + w * es.get(i, 0.0) / top for i, s in sc.items()}


def session_outside(x: Question, sc: Scores, radius: int = 2, candidate_rows: bool = False) -> Scores:
    """The session signal over the matches outside the hit's own window (those are shown with it):
    within `radius` messages, or within `radius` rows of the candidates in time order (what a window
    function over the candidates sees)."""
    p = x.p
    ms = sorted(x.match)
    row = {i: r for r, i in enumerate(ms)}
    out = dict(sc)
    for i in x.match:
        near = [j for j in x.match if j != i and abs(x.turns[j].sent_at - x.turns[i].sent_at) <= p.session_gap]
        old = max((x.rel[j] for j in near), default=0.0)
        far = [j for j in near if (abs(row[j] - row[i]) if candidate_rows else abs(j - i)) > radius]
        out[i] += p.session * (max((x.rel[j] for j in far), default=0.0) - old)
    return out


def _greedy(x: Question, sc: Scores, gain: Callable[[int, set[int], Counter[str], float], float],
            pool: int = 20) -> Scores:
    """Re-select the first `pool` one at a time, each the best by gain(i, shown, matched terms, best left)."""
    order = x.order(sc)
    rest = order[:pool]
    shown: set[int] = set()
    matched: Counter[str] = Counter()
    out: Scores = {}
    while rest:
        top = max(sc[i] for i in rest)
        best = max(rest, key=lambda i: (gain(i, shown, matched, top), x.turns[i].sent_at.timestamp()))
        out[best] = 1000.0 - len(out)
        shown |= set(x.window(best))
        matched.update(x.terms_in(best))
        rest.remove(best)
    for i in order[pool:]:
        out[i] = sc[i]
    return out


def window_set_cover(x: Question, sc: Scores, w: float = 0.5) -> Scores:
    """Greedy: + w x the rarity share of query terms in the hit's window not yet in a chosen hit's window."""
    wt = {i: set().union(*(x.terms_in(j) for j in x.window(i))) for i in x.match}
    covered: set[str] = set()

    def gain(i: int, shown: set[int], matched: Counter[str], top: float) -> float:
        covered.clear()
        for j in shown:
            covered.update(x.terms_in(j))
        return sc[i] + w * sum(x.idf[t] for t in wt[i] - covered) / (x.total_idf or 1)
    return _greedy(x, sc, gain)


def term_aspects(x: Question, sc: Scores, w: float = 0.6) -> Scores:
    """xQuAD over the query's terms as aspects: + w x the rarity of each term the hit matches, divided by
    1 + the number of chosen hits matching it."""
    return _greedy(x, sc, lambda i, shown, matched, top: sc[i] + w * sum(
        x.idf[t] / (1 + matched[t]) for t in x.terms_in(i)) / (x.total_idf or 1))


def new_shown(x: Question, sc: Scores, w: float = 0.1) -> Scores:
    """Greedy: + w x the coverage of the matches in the hit's window not already shown by a chosen hit."""
    ms = set(x.match)
    return _greedy(x, sc, lambda i, shown, matched, top: sc[i] + w * sum(
        x.cov(j) for j in x.window(i) if j in ms and j not in shown))


def band(x: Question, sc: Scores, delta: float = 0.03) -> Scores:
    """Greedy: among the hits within delta of the best score left, the one whose window shows the most
    not-yet-shown coverage (a tie-break by novelty: never passes a match stronger by more than delta)."""
    ms = set(x.match)
    return _greedy(x, sc, lambda i, shown, matched, top: -1e9 if sc[i] < top - delta else sum(
        x.cov(j) for j in x.window(i) if j in ms and j not in shown) + sc[i] * 1e-6)


def flat_band(x: Question, sc: Scores, delta: float = 0.05, flat: float = 0.7) -> Scores:
    """band(delta) only when the top is flat (the 8th score at least `flat` of the first: many partial
    matches, as multi-hop questions have), else the shipped order."""
    o = x.order(sc)
    return band(x, sc, delta) if len(o) >= 8 and sc[o[7]] >= flat * sc[o[0]] else sc


def weak_shown(x: Question, sc: Scores, w: float = 0.1) -> Scores:
    """Greedy: - w x (1 - the match's relative text) when a chosen hit already shows it as a neighbour."""
    return _greedy(x, sc, lambda i, shown, matched, top: sc[i] - w * (i in shown) * (1 - x.rel[i]))


def neighbourhood(x: Question, sc: Scores, w: float = 0.3, joined: int = 20) -> Scores:
    """Params(neighbourhood=w, joined=...) of the restatement: the messages next to the first `joined`
    matches are ranked too (no text score of their own), every message + w x the best relative text
    within two messages."""
    ranked = set(x.match)
    for i in sorted(x.match, key=lambda i: -x.rel[i])[:joined]:
        ranked.update(x.window(i))
    return {i: (sc[i] if i in sc else x.score(i, with_text=False))
            + w * max((x.rel[j] for j in x.window(i) if j != i), default=0.0) for i in ranked}


def chain(*steps: tuple[Callable[..., Scores], dict[str, Any]]) -> Callable[[Question, Scores], Scores]:
    def run(x: Question, sc: Scores) -> Scores:
        for fn, kw in steps:
            sc = fn(x, sc, **kw)
        return sc
    return run


#: The window stage as it ships (history._window_scores): window coverage for the first 30 matches, then
#: feedback with its terms' rarity over the first 100.
STAGE_STEPS: tuple[tuple[Callable[..., Scores], dict[str, Any]], ...] = (
    (window_coverage_first, {"w": 0.5, "first": 30}), (feedback_first, {"first": 100}))
STAGE = chain(*STAGE_STEPS)

VARIANTS: dict[str, tuple[Callable[[Question, Scores], Scores] | None, dict[str, Any]]] = {
    "shipped": (None, {}),  # history._score alone, before the window stage
    "text0.5": (None, {"text": 0.5}),
    "window_coverage0.2": (lambda x, s: window_coverage(x, s, 0.2), {}),
    "window_coverage0.5": (lambda x, s: window_coverage(x, s, 0.5), {}),
    "window_coverage_extra0.3": (lambda x, s: window_coverage(x, s, 0.3, extra=True), {}),
    "window_coverage_rows0.5": (lambda x, s: window_coverage_rows(x, s, 0.5), {}),
    "window_coverage_rows0.3": (lambda x, s: window_coverage_rows(x, s, 0.3), {}),
    "window_coverage_rows1_0.5": (lambda x, s: window_coverage_rows(x, s, 0.5, 1), {}),
    "window_coverage0.5+feedback_k2m5": (chain((window_coverage, {"w": 0.5}),
                                               (feedback, {"w": 0.2, "k": 2, "m": 5})), {}),
    "window_coverage_rows0.5+feedback_k2m5": (chain((window_coverage_rows, {"w": 0.5}),
                                                    (feedback, {"w": 0.2, "k": 2, "m": 5})), {}),
    "wc_first20+fb": (chain((window_coverage_first, {"w": 0.5, "first": 20}),
                            (feedback, {"w": 0.2, "k": 2, "m": 5})), {}),
    "wc_first30+fb": (chain((window_coverage_first, {"w": 0.5, "first": 30}),
                            (feedback, {"w": 0.2, "k": 2, "m": 5})), {}),
    "wc_first30+fb_first30": (chain((window_coverage_first, {"w": 0.5, "first": 30}),
                                    (feedback_first, {"first": 30})), {}),
    "wc_first30+fb_first100": (STAGE, {}),
    "stage_text0.5": (STAGE, {"text": 0.5}),
    "stage_text0.25": (STAGE, {"text": 0.25}),
    "stage_text0": (STAGE, {"text": 0.0}),
    "stage_text0_cov1": (STAGE, {"text": 0.0, "coverage": 1.0}),
    "stage_b0": (STAGE, {"b": 0.0}),
    "stage_b0_k1_0.3": (STAGE, {"b": 0.0, "k1": 0.3}),
    "stage_b0.2": (STAGE, {"b": 0.2}),
    "stage+band0.03": (chain(*STAGE_STEPS, (band, {"delta": 0.03})), {}),
    "stage+band0.05": (chain(*STAGE_STEPS, (band, {"delta": 0.05})), {}),
    "stage+new_shown0.05": (chain(*STAGE_STEPS, (new_shown, {"w": 0.05})), {}),
    "wc_first20": (lambda x, s: window_coverage_first(x, s, 0.5, 20), {}),
    "wc_first20+fb_first20": (chain((window_coverage_first, {"w": 0.5, "first": 20}),
                                    (feedback_first, {"first": 20})), {}),
    "wc_first20+fb_first50": (chain((window_coverage_first, {"w": 0.5, "first": 20}),
                                    (feedback_first, {"first": 50})), {}),
    "capped_neighbour0.2": (lambda x, s: capped_neighbour(x, s, 0.2), {}),
    "feedback_k3m10": (lambda x, s: feedback(x, s, 0.2, 3, 10), {}),
    "feedback_k2m5": (lambda x, s: feedback(x, s, 0.2, 2, 5), {}),
    "session_outside2": (lambda x, s: session_outside(x, s, 2), {}),
    "session_outside_rows1": (lambda x, s: session_outside(x, s, 1, candidate_rows=True), {}),
    "window_set_cover0.5": (lambda x, s: window_set_cover(x, s, 0.5), {}),
    "term_aspects0.6": (lambda x, s: term_aspects(x, s, 0.6), {}),
    "new_shown0.05": (lambda x, s: new_shown(x, s, 0.05), {}),
    "new_shown0.2": (lambda x, s: new_shown(x, s, 0.2), {}),
    "band0.03": (lambda x, s: band(x, s, 0.03), {}),
    "band0.05": (lambda x, s: band(x, s, 0.05), {}),
    "flat_band0.05": (lambda x, s: flat_band(x, s, 0.05, 0.7), {}),
    "weak_shown0.1": (lambda x, s: weak_shown(x, s, 0.1), {}),
    "feedback_k2m5+band0.03": (chain((feedback, {"w": 0.2, "k": 2, "m": 5}), (band, {"delta": 0.03})), {}),
    "feedback+window_coverage0.2+new_shown0.2": (chain((feedback, {}), (window_coverage, {}),
                                                       (new_shown, {"w": 0.2})), {}),
    "neighbourhood0.3": (lambda x, s: neighbourhood(x, s, 0.3), {}),
    "neighbourhood0.3+band0.1": (chain((neighbourhood, {}), (band, {"delta": 0.1})), {}),
}

Figures = dict[tuple[str, str], tuple[float, float]]
GROUPS = ("1-4", "1", "2", "3", "4")


def _figures(rows: dict[str, list[tuple[int, float, float]]]) -> Figures:
    out: Figures = {}
    for v, rs in rows.items():
        for g in GROUPS:
            sel = [(h, c) for cat, h, c in rs if (g == "1-4" and cat in (1, 2, 3, 4)) or str(cat) == g]
            out[(v, g)] = (sum(h for h, _ in sel) / len(sel), sum(c for _, c in sel) / len(sel))
    return out


def _recall(ranked: list[str], nb: dict[str, set[str]], ev: set[str]) -> tuple[float, float]:
    ctx = set(ranked[:8])
    for h in ranked[:8]:
        ctx |= nb[h]
    return len(ev & set(ranked[:8])) / len(ev), len(ev & ctx) / len(ev)


def _conversation_rows(cache: dict[str, Any], c: dict[str, Any], variant: Callable[[Question, Scores], Scores] | None,
                       p: R.Params, shift: timedelta) -> list[tuple[int, float, float]]:
    """(category, R@8 hits, context R@8) of each question of conversation c, its dates moved by shift."""
    order = [k for k, _, _ in c["turns"]]
    nb = {k: set(order[max(0, i - 2):i] + order[i + 1:i + 3]) for i, k in enumerate(order)}
    turns = [R.Turn(k, s, t + shift, c["docs"][k]) for k, s, t in c["turns"]]
    rows = []
    for q in c["qs"]:
        x = Question(turns, q, c["names"], cache["now"], p)
        sc = variant(x, x.sc) if variant and x.match else x.sc
        ranked = [turns[i].key for i in x.order(sc)[:20]]
        rows.append((q["category"], *_recall(ranked, nb, q["evidence"])))
    return rows


def _bm25_rows(c: dict[str, Any]) -> list[tuple[int, float, float]]:
    """The same for BM25 over the conversation's lexemes."""
    order = [k for k, _, _ in c["turns"]]
    nb = {k: set(order[max(0, i - 2):i] + order[i + 1:i + 3]) for i, k in enumerate(order)}
    model = BM25([c["docs"][d] for d in order])
    rows = []
    for q in c["qs"]:
        s = model.scores(q["terms"])
        ranked = sorted((i for i, d in enumerate(order) if any(t in c["docs"][d] for t in q["terms"])),
                        key=lambda i: (-s[i], -i))[:20]
        rows.append((q["category"], *_recall([order[i] for i in ranked], nb, q["evidence"])))
    return rows


def evaluate(cache: dict[str, Any], variant: Callable[[Question, Scores], Scores] | None, p: R.Params) -> Figures:
    rows: dict[str, list[tuple[int, float, float]]] = {"locomo": [], "recent": []}
    for c in cache["convs"]:
        rows["locomo"] += _conversation_rows(cache, c, variant, p, timedelta(0))
        rows["recent"] += _conversation_rows(cache, c, variant, p, c["shift"])
    return _figures(rows)


def bm25(cache: dict[str, Any]) -> Figures:
    return _figures({"bm25": [r for c in cache["convs"] for r in _bm25_rows(c)]})


def oracle(cache: dict[str, Any], p: R.Params, pool: int = 20) -> dict[str, float]:
    """Context R@8 (categories 1-4) if the shipped first 8 kept their evidence hits and the other places
    went, greedily, to the hits of the first `pool` that show the most evidence: the headroom of
    re-selecting among ranked matches without losing a hit."""
    out: dict[str, float] = {}
    for v in ("locomo", "recent"):
        total, n = 0.0, 0
        for c in cache["convs"]:
            order = [k for k, _, _ in c["turns"]]
            nb = {k: set(order[max(0, i - 2):i] + order[i + 1:i + 3]) for i, k in enumerate(order)}
            shift = c["shift"] if v == "recent" else timedelta(0)
            turns = [R.Turn(k, s, t + shift, c["docs"][k]) for k, s, t in c["turns"]]
            for q in c["qs"]:
                if q["category"] not in (1, 2, 3, 4):
                    continue
                n += 1
                x = Question(turns, q, c["names"], cache["now"], p)
                ranked = [turns[i].key for i in x.order(x.sc)][:pool]
                ev = q["evidence"]

                def shows(hs: list[str]) -> int:
                    return len(ev & set(hs).union(*(nb[h] for h in hs)))
                chosen = [h for h in ranked[:8] if h in ev]
                rest = [h for h in ranked if h not in chosen]
                while len(chosen) < 8 and rest:
                    best = max(rest, key=lambda h: (shows(chosen + [h]), -ranked.index(h)))
                    chosen.append(best)
                    rest.remove(best)
                total += shows(chosen) / len(ev)
        out[v] = total / n
    return out


def _hits_of_categories_1_4(rows: list[tuple[int, float, float]]) -> float:
    hits = [h for category, h, _ in rows if category in (1, 2, 3, 4)]
    return sum(hits) / len(hits)


def by_conversation(cache: dict[str, Any], variant: Callable[[Question, Scores], Scores] | None, p: R.Params,
                    shifted: bool) -> list[float]:
    """Hits R@8 over categories 1-4, one figure per conversation (LoCoMo's dates, or ending yesterday)."""
    return [_hits_of_categories_1_4(_conversation_rows(cache, c, variant, p, c["shift"] if shifted else timedelta(0)))
            for c in cache["convs"]]


def bm25_by_conversation(cache: dict[str, Any]) -> list[float]:
    return [_hits_of_categories_1_4(_bm25_rows(c)) for c in cache["convs"]]


def conversations(cache: dict[str, Any], base: R.Params) -> None:
    """Per conversation: BM25, the shipped ranking with its window stage, and each weight at 0 (as a change)."""
    stage = chain((window_coverage_first, {"w": base.window_coverage, "first": 30}),
                  (feedback_first, {"w": base.feedback, "first": 100}))
    without: dict[str, tuple[Callable[[Question, Scores], Scores] | None, R.Params]] = {
        w: (stage, replace(base, **{w: 0.0}))
        for w in ("text", "coverage", "actor", "named_speaker", "session", "period", "tells_time")}
    without["window_coverage"] = (chain((feedback_first, {"w": base.feedback, "first": 100})), base)
    without["feedback"] = (chain((window_coverage_first, {"w": base.window_coverage, "first": 30})), base)
    for shifted in (False, True):
        print("dates ending yesterday" if shifted else "LoCoMo's dates")
        shipped = by_conversation(cache, stage, base, shifted)
        print(f"  {'BM25':22s}" + "".join(f" {h:6.3f}" for h in bm25_by_conversation(cache)))
        print(f"  {'shipped':22s}" + "".join(f" {h:6.3f}" for h in shipped))
        for name, (fn, p) in without.items():
            r = by_conversation(cache, fn, p, shifted)
            print(f"  {'without ' + name:22s}" + "".join(f" {h - s:+6.3f}" for h, s in zip(r, shipped)), flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["dump"]:
        dump(argv[1], argv[2])
        return 0
    with open(argv[-1] if argv[:1] in (["oracle"], ["conversations"]) else argv[1], "rb") as f:
        cache = pickle.load(f)
    base = R.Params.from_settings(cache["settings"])
    if argv[:1] == ["conversations"]:
        conversations(cache, base)
        return 0
    if argv[:1] == ["oracle"]:
        print(" ".join(f"{v}: {r:.3f}" for v, r in oracle(cache, base).items()))
        return 0
    ref = bm25(cache)
    print("BM25 " + " ".join(f"c{g} {ref[('bm25', g)][0]:.3f}/{ref[('bm25', g)][1]:.3f}" for g in GROUPS))
    for name in argv[2:] or ["shipped"]:
        fn, params = VARIANTS[name]
        out = evaluate(cache, fn, replace(base, **params))
        below = [f"{v}:c{g}:{'hits' if k == 0 else 'context'}" for v in ("locomo", "recent") for g in "1234"
                 for k in (0, 1) if out[(v, g)][k] < ref[("bm25", g)][k] - 1e-9]
        cats = " ".join(f"c{g} {out[('locomo', g)][0]:.3f}/{out[('locomo', g)][1]:.3f}"
                        f"|{out[('recent', g)][0]:.3f}/{out[('recent', g)][1]:.3f}" for g in "1234")
        print(f"{name:42s} {out[('locomo', '1-4')][0]:.3f} / {out[('locomo', '1-4')][1]:.3f}   "
              f"{out[('recent', '1-4')][0]:.3f} / {out[('recent', '1-4')][1]:.3f}   {cats}"
              f"   below BM25: {', '.join(below) or 'none'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
