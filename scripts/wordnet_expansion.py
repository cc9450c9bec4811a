"""Query expansion from WordNet, measured on the ranking's restatement (docs/relevance.md, "A thesaurus").

    apt-get install wordnet-base     # WordNet 3.0's database files in /usr/share/wordnet
    PYTHONPATH=pyclient .venv/bin/python scripts/relevance_loop.py dump "$LOCOMO_DIR" /tmp/lexemes.pkl
    PYTHONPATH=pyclient .venv/bin/python scripts/wordnet_expansion.py "$LOCOMO_DIR" /tmp/lexemes.pkl  # ~10 min

The largest loss of the lexical ranking is evidence that shares no word with the question ("What
European countries has Maria been to?" - "I took this pic in Spain"). A thesaurus is the lexical way
to reach it: each content word of the question (a word whose lexeme is one of the question's terms)
is looked up in WordNet (its inflections undone as WordNet's morphy does), and the words of its most
frequent sense (synonyms) and of that sense's direct hyponyms and instances (kinds of it: Spain for
"European country", phrases of two words looked up as one) become extra terms, analysed by the
project's own analysis (history._query_terms, in a throwaway cluster) so they are lexemes as the
documents' are. They are alternatives like the question's terms, their rarity scaled by a weight; a
message that matches only extra terms is ranked with its signals scaled by a second factor (at 1 the
priors of a message that holds only a related word can outrank weak real matches). Everything else
is the ranking that ships (relevance_loop.Question and the window stage, STAGE).

It prints, for each of SETTINGS, R@8 hits / context R@8 over categories 1-4 for both date variants,
per category (LoCoMo's dates), and hits R@8 per conversation in both variants.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location("relevance_loop", Path(__file__).with_name("relevance_loop.py"))
assert _spec and _spec.loader
loop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loop)
R = loop.R
SHIPPED = loop.Question

WORDNET = Path("/usr/share/wordnet")
POS = {"n": "noun", "v": "verb"}
# WordNet's morphy: the suffixes an inflected form may carry, and what replaces them
SUFFIXES = {"n": [("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
                  ("ies", "y"), ("s", "")],
            "v": [("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""),
                  ("s", "")]}


@dataclass
class Synset:
    words: list[str]
    kinds: list[int]  # offsets of the direct hyponyms and instances (pointers ~ and ~i)


class WordNet:
    def __init__(self, root: Path = WORDNET):
        self.index: dict[str, dict[str, list[int]]] = {}  # pos -> lemma -> synset offsets, most frequent first
        self.synsets: dict[str, dict[int, Synset]] = {}
        self.exceptions: dict[str, dict[str, str]] = {}
        for pos, name in POS.items():
            self.index[pos] = {}
            for line in (root / f"index.{name}").read_text(encoding="latin-1").splitlines():
                if line.startswith(" "):
                    continue  # the licence
                f = line.split()
                pointers = int(f[3])
                self.index[pos][f[0]] = [int(o) for o in f[6 + pointers:]]
            self.synsets[pos] = {}
            for line in (root / f"data.{name}").read_text(encoding="latin-1").splitlines():
                if line.startswith(" "):
                    continue
                f = line.split(" | ")[0].split()
                n = int(f[3], 16)
                words = [f[4 + 2 * k] for k in range(n)]
                at = 4 + 2 * n
                kinds = [int(f[at + 1 + 4 * k + 1]) for k in range(int(f[at]))
                         if f[at + 1 + 4 * k] in ("~", "~i") and f[at + 1 + 4 * k + 2] == pos]
                self.synsets[pos][int(f[0])] = Synset(words, kinds)
            self.exceptions[pos] = dict(line.split()[:2] for line in
                                        (root / f"{name}.exc").read_text(encoding="latin-1").splitlines())

    def base_forms(self, word: str, pos: str) -> list[str]:
        forms = [self.exceptions[pos].get(word, word)] + [word[:-len(s)] + r for s, r in SUFFIXES[pos]
                                                          if word.endswith(s)]
        return [w for w in dict.fromkeys(forms) if w in self.index[pos]][:1]

    def related(self, phrase: str) -> set[str]:
        """Words of the phrase's most frequent sense and of its direct kinds, for nouns and verbs."""
        out: set[str] = set()
        for pos in POS:
            for base in self.base_forms(phrase, pos):
                first = self.synsets[pos][self.index[pos][base][0]]
                for s in [first] + [self.synsets[pos][k] for k in first.kinds]:
                    out.update(w.lower() for w in s.words if "_" not in w and w.lower() != base)
        return out


def expansions(wn: WordNet, question: str) -> dict[str, set[str]]:
    """Per question word and two-word phrase: the WordNet words related to it (attach keeps those of words
    whose lexemes are terms and not the people's names: named_speaker's evidence, not a thesaurus')."""
    words = re.findall(r"[A-Za-z]+", question)
    out: dict[str, set[str]] = {}
    for k, w in enumerate(words):
        out[w.lower()] = wn.related(w.lower())
        if k + 1 < len(words):
            out[f"{w.lower()}_{words[k + 1].lower()}"] = wn.related(f"{w.lower()}_{words[k + 1].lower()}")
    return out


def attach(data: str, cache: dict[str, Any]) -> None:
    """Each cached question gets 'expansion': lexemes of related words that are neither terms nor names."""
    import psycopg

    from history_search.cluster import ThrowawayCluster
    from history_search.migrations import apply_migrations
    from history_search.relevance import locomo

    wn = WordNet()
    convs = locomo.load_dir(Path(data))
    per_question = []
    for conv, c in zip(convs, cache["convs"]):
        qs = [q for q in conv.questions if q.evidence]
        assert len(qs) == len(c["qs"]), "the cache is of other data"
        per_question += [(c, cq, expansions(wn, q.question)) for q, cq in zip(qs, c["qs"])]
    words = sorted({w for _, _, e in per_question for ws in e.values() for w in ws}
                   | {k.split("_")[0] for _, _, e in per_question for k in e})
    with ThrowawayCluster() as cluster:
        with psycopg.connect(cluster.dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE history_wordnet")
        dsn = cluster.dsn_for("history_wordnet")
        apply_migrations(dsn)
        with psycopg.connect(dsn) as conn:
            analysed = dict(conn.execute(
                "SELECT w, history._query_terms(w, history._query_languages(), 32) FROM unnest(%s::text[]) w",
                (words,)).fetchall())
    for c, cq, e in per_question:
        names = {t for s in c["names"].values() for t in s}
        terms = set(cq["terms"])
        extra: set[str] = set()
        for key, related in e.items():
            head = analysed.get(key.split("_")[0], [])
            if not (set(head) & terms) or set(head) & names:
                continue  # a stop word, or a name
            for w in related:
                lexemes = analysed.get(w, [])
                if len(lexemes) == 1 and lexemes[0] not in terms and lexemes[0] not in names:
                    extra.add(lexemes[0])
        cq["expansion"] = sorted(extra)


def expanded(weight: float, signals: float, retrieve: bool = True) -> type:
    """relevance_loop.Question with the expansion terms as weighted alternatives."""
    class Expanded(SHIPPED):
        def __init__(self, turns: list[Any], q: dict[str, Any], names: dict[str, set[str]], now: Any,
                     p: Any) -> None:
            self.own_terms = set(q["terms"])
            self.extra = set(q["expansion"])
            super().__init__(turns, dict(q, terms=list(q["terms"]) + q["expansion"]), names, now, p)

        def retrieving(self, terms: list[str]) -> list[str]:
            return terms if retrieve else [t for t in terms if t in self.own_terms]

        def weigh(self, term: str) -> float:
            return weight if term in self.extra else 1.0

        def score(self, i: int, with_text: bool) -> float:
            full: float = super().score(i, with_text)
            if not with_text or self.own_terms & self.turns[i].lexemes.keys():
                return full
            text = self.p.text * self.rel[i] + self.p.coverage * self.cov(i)
            return text + signals * (full - text)
    return Expanded


def reach(cache: dict[str, Any]) -> tuple[int, int, float]:
    """Evidence turns (categories 1-4) that match no term of their question; how many hold an extra term;
    and how many turns per question hold an extra term and no term (what such evidence competes with)."""
    no_term = held = 0
    competing: list[int] = []
    for c in cache["convs"]:
        for q in c["qs"]:
            if q["category"] not in (1, 2, 3, 4):
                continue
            terms, extra = set(q["terms"]), set(q["expansion"])
            for e in q["evidence"] & c["docs"].keys():
                if not terms & c["docs"][e].keys():
                    no_term += 1
                    held += bool(extra & c["docs"][e].keys())
            competing.append(sum(1 for d in c["docs"].values() if extra & d.keys() and not terms & d.keys()))
    return no_term, held, sum(competing) / len(competing)


#: (weight, signals, whether a message matching only extra terms is a candidate)
SETTINGS = ((0.0, 1.0, True), (0.01, 0.3, True), (0.05, 0.3, True), (0.1, 0.3, True), (0.1, 0.0, True),
            (0.1, 1.0, True), (0.2, 0.3, True), (0.2, 0.3, False), (0.3, 0.3, True), (0.3, 0.3, False),
            (0.5, 0.3, True))


def main(argv: list[str]) -> int:
    with open(argv[1], "rb") as f:
        cache = pickle.load(f)
    attach(argv[0], cache)
    questions = [q for c in cache["convs"] for q in c["qs"]]
    no_term, held, competing = reach(cache)
    print(f"extra terms per question: {sum(len(q['expansion']) for q in questions) / len(questions):.1f}; "
          f"evidence matching no term: {no_term}, holding an extra term: {held}; "
          f"turns per question holding an extra term and no term: {competing:.1f}")
    base = R.Params.from_settings(cache["settings"])
    for weight, signals, retrieve in SETTINGS:
        loop.Question = expanded(weight, signals, retrieve) if weight else SHIPPED
        out = loop.evaluate(cache, loop.STAGE, base)
        cats = " ".join(f"c{g} {out[('locomo', g)][0]:.3f}/{out[('locomo', g)][1]:.3f}" for g in "1234")
        per = [loop.by_conversation(cache, loop.STAGE, base, shifted) for shifted in (False, True)]
        print(f"weight {weight} signals {signals} candidates {'all' if retrieve else 'terms'}: "
              f"{out[('locomo', '1-4')][0]:.3f} / {out[('locomo', '1-4')][1]:.3f}   "
              f"{out[('recent', '1-4')][0]:.3f} / {out[('recent', '1-4')][1]:.3f}   {cats}   per conversation: "
              + " | ".join(" ".join(f"{h:.3f}" for h in hs) for hs in per), flush=True)
    loop.Question = SHIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
