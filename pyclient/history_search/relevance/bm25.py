"""Okapi BM25 written out, as ``rank_bm25.BM25Okapi`` computes it (k1 1.5, b 0.75, epsilon 0.25).

    idf(t)   = ln((N - n_t + 0.5) / (n_t + 0.5)), a negative idf replaced by epsilon × the mean idf
    score(d) = Σ_t idf(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))

tests/test_eval.py checks it against the package (the optional ``eval`` extra).
Documents are term-frequency maps read from the projection's tsvectors, so
the baseline scores exactly the lexemes search sees.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

__all__ = ["BM25"]


class BM25:
    def __init__(self, docs: Sequence[Mapping[str, int]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b = k1, b
        self.docs = list(docs)
        self.lengths = [sum(d.values()) for d in self.docs]
        n = len(self.docs)
        self.avgdl = sum(self.lengths) / n if n else 0.0
        df: dict[str, int] = {}
        for d in self.docs:
            for t in d:
                df[t] = df.get(t, 0) + 1
        self.idf: dict[str, float] = {}
        negative = []
        for t, f in df.items():
            self.idf[t] = math.log(n - f + 0.5) - math.log(f + 0.5)
            if self.idf[t] < 0:
                negative.append(t)
        mean_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0
        for t in negative:
            self.idf[t] = epsilon * mean_idf

    def scores(self, query: Sequence[str]) -> list[float]:
        out = [0.0] * len(self.docs)
        for t in query:
            idf = self.idf.get(t, 0.0)
            if not idf:
                continue
            for i, d in enumerate(self.docs):
                tf = d.get(t, 0)
                if tf:
                    norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avgdl) if self.avgdl else self.k1
                    out[i] += idf * tf * (self.k1 + 1) / (tf + norm)
        return out
