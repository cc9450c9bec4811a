"""Smoke run of ``history-search eval`` on a tiny LoCoMo-format file (tests/data/tiny.json).

No score is asserted: only that every figure is produced for every system,
category and date variant, that malformed evidence ids are repaired or
dropped as documented, and that the last line is the summary in its fixed
form. The written-out BM25 is checked against the ``rank-bm25`` package.
"""

import json
import math
import re
from pathlib import Path

import pytest
from rank_bm25 import BM25Okapi

from history_search.cli import main as cli_main
from history_search.relevance import locomo, runner
from history_search.relevance.bm25 import BM25

DATA = Path(__file__).parent / "data" / "locomo"
SUMMARY = re.compile(r"^summary: R@8 hits=\d\.\d\d  BM25=\d\.\d\d  context=\d\.\d\d  BM25\+nb=\d\.\d\d  "
                     r"\(recent: R@8 hits=\d\.\d\d  BM25=\d\.\d\d\)$")


def test_evidence_ids_are_normalised():
    assert locomo.normalise_evidence("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert locomo.normalise_evidence("D:11:26") == ["D11:26"]
    assert locomo.normalise_evidence("D30:05") == ["D30:5"]
    assert locomo.normalise_evidence("D1:3") == ["D1:3"]


def test_tiny_file_is_read():
    conv = locomo.load_file(DATA / "tiny.json")
    assert conv.speakers == ("Ada", "Ben")
    assert [t.dia_id for t in conv.turns][:3] == ["D1:1", "D1:2", "D1:3"] and len(conv.turns) == 12
    # turns of a session keep their order in time; session 3 has a date and no turns
    assert all(a.sent_at < b.sent_at for a, b in zip(conv.turns, conv.turns[1:]))
    assert locomo.turn_body(conv.turns[4]).endswith("[image: a photo of a lighthouse painting at sunrise]")
    assert [q.evidence for q in conv.questions] == [("D1:3",), ("D1:5", "D2:2"), ("D2:4",), ("D2:6",), (), ("D1:4",)]
    assert conv.evidence_stats == {"questions": 6, "evidence_ids": 6, "repaired": 3, "dropped": 1,
                                   "questions_without_evidence": 1}


@pytest.mark.parametrize("query", [["museum"], ["ada", "paint"], ["lighthous", "sunris", "nowher"], []])
def test_bm25_matches_rank_bm25(query):
    corpus = [["ada", "museum", "museum", "week"], ["ben", "paint"], ["ada", "paint", "lighthous", "sunris"],
              ["thank", "ada"], [], ["ada", "ada", "ada", "go"]]
    ours = BM25([{t: d.count(t) for t in d} for d in corpus]).scores(query)
    theirs = BM25Okapi(corpus).get_scores(query)
    assert len(ours) == len(theirs)
    assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) for a, b in zip(ours, theirs))


def test_ranking_metrics():
    m = runner.evaluate_ranking(["a", "b", "c"], {"a": {"x"}, "c": {"y"}}, {"c", "y", "z"})
    assert m["r5"] == m["r8"] == m["r20"] == pytest.approx(1 / 3)
    assert m["ctx8"] == pytest.approx(2 / 3)
    assert m["rr"] == pytest.approx(1 / 3)
    assert m["returned8"] == 5


def test_evidence_places():
    # hits a, b (b's neighbours x, y); evidence: a hit, a neighbour, one ranked 9-20, one matching a
    # query term below 20, one matching none
    ranked = ["a", "b", "c1", "c2", "c3", "c4", "c5", "c6", "r9"]
    places = runner.evidence_places(ranked, {"b": {"x", "y"}}, {"a", "y", "r9", "far", "silent"}, {"a", "r9", "far"})
    assert places == {"hit": 1, "neighbour": 1, "ranked_9_20": 1, "below_20": 1, "no_term": 1}
    assert list(places) == list(runner.PLACES)


def test_restatement_session_and_neighbourhood():
    from dataclasses import replace
    from datetime import datetime, timedelta, timezone

    from history_search.relevance import restatement as rs

    t0 = datetime(2023, 5, 1, tzinfo=timezone.utc)
    turns = [rs.Turn("D1:1", "Ada", t0, {"museum": 1, "kid": 1}),            # strong, in session 1
             rs.Turn("D1:2", "Ben", t0 + timedelta(seconds=30), {"yesterday": 1}),  # the reply: matches nothing
             rs.Turn("D1:3", "Ada", t0 + timedelta(seconds=60), {"kid": 1, "park": 1}),
             rs.Turn("D2:1", "Ada", t0 + timedelta(days=3), {"kid": 1, "zoo": 1})]  # same text score, alone
    def go(p: rs.Params) -> list[str]:
        return rs.rank(turns, ["museum", "kid"], set(), set(), "Ada", None, None, t0, p)
    no_window = rs.Params(window_coverage=0, feedback=0)
    # D1:3 and D2:1 tie on text; D1:3's session holds the best match: it ranks first, the newer one without
    assert go(no_window) == ["D1:1", "D1:3", "D2:1"]
    assert go(replace(no_window, session=0)) == ["D1:1", "D2:1", "D1:3"]
    # the window stage: D1:3's window (two turns each side) holds "museum" too, D2:1's nothing more
    assert go(rs.Params(session=0, feedback=0)) == ["D1:1", "D1:3", "D2:1"]
    # joined neighbours of the best match rank too, by the neighbourhood score alone
    assert go(replace(no_window, neighbourhood=0.3, joined=1))[:2] == ["D1:1", "D1:3"] and "D1:2" in go(
        replace(no_window, neighbourhood=0.3, joined=1))
    assert rs._interval("00:30:00") == timedelta(minutes=30) and rs._interval("3 days") == timedelta(days=3)


def test_eval_smoke(db_dsn, tmp_path, capsys):
    rc = cli_main(["eval", "--data", str(DATA), "--dsn", db_dsn, "--out", str(tmp_path), "--ablation", "--quiet"])
    assert rc == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert SUMMARY.match(lines[-1]), lines[-1]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["summary"] == lines[-1]
    assert results["data_stats"]["dropped"] == 1 and results["data_stats"]["questions_scored"] == 5
    assert set(results["systems"]) == {"search_locomo", "search_recent", "bm25", "ts_rank", "restatement"}
    # history._score restated in Python ranks every question's first 8 as search did
    assert results["restatement_agreement"] == 1.0
    for system, groups in results["systems"].items():
        assert groups["1-4"]["n"] == 4 and groups["5"]["n"] == 1, system
        for key in ("r5", "r8", "r20", "ctx8", "rr"):
            assert 0 <= groups["1-4"][key] <= 1, (system, key)
        assert groups["1-4"]["r5"] <= groups["1-4"]["r8"] <= groups["1-4"]["r20"]
        assert groups["1-4"]["r8"] <= groups["1-4"]["ctx8"]
        # every evidence turn of the four scored questions of categories 1-4 is in exactly one place
        assert set(groups["1-4"]["places"]) == set(runner.PLACES), system
        assert sum(groups["1-4"]["places"].values()) == 5, system
    # every nonzero signal weight is ablated in both date variants
    assert "actor_weight" in results["ablation"] and "recency_weight" in results["ablation"]
    assert all(set(v) == {"locomo", "recent"} for v in results["ablation"].values())
    md = (tmp_path / "results.md").read_text()
    assert "| history-search, LoCoMo's dates |" in md and "Ablation" in md and md.rstrip().endswith(f"`{lines[-1]}`")
    assert "Where the evidence turns are" in md
    assert (tmp_path / "chart.png").stat().st_size > 0
    # the settings the run changed are restored
    import psycopg
    with psycopg.connect(db_dsn) as conn:
        assert conn.execute("SELECT actor_weight FROM history.search_settings").fetchone()[0] == \
            results["settings"]["actor_weight"]
