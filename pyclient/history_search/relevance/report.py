"""The markdown tables and the chart of an eval run (``results.md``, ``chart.png``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

NAMES = {
    "search_locomo": "history-search, LoCoMo's dates",
    "search_recent": "history-search, dates ending yesterday",
    "bm25": "BM25 (context: ±2 neighbours)",
    "ts_rank": "ts_rank alone (context: ±2 neighbours)",
}
GROUP_NAMES = {"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-domain", "4": "4 single-hop",
               "1-4": "**1–4**", "5": "5 adversarial"}


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def render(results: dict[str, Any]) -> str:
    s = results["systems"]
    st = results["data_stats"]
    out = [f"### Relevance on {', '.join(results['conversations'])} ({results['data']})", "",
           f"{st['turns']} turns, {st['questions']} questions, {st['questions_scored']} with evidence naming a turn; "
           f"{st['evidence_ids']} evidence entries, {st['repaired']} repaired, {st['dropped']} ids dropped "
           f"(naming no turn), {st['questions_without_evidence']} questions left without evidence (not scored). "
           f"Run took {results['seconds']} s.", "",
           "Categories 1–4:", "",
           "| system | n | R@5 | R@8 | R@20 | context R@8 | MRR | returned (top 8 + neighbours) "
           "| R@8 requester's evidence | R@8 other's evidence |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for k, name in NAMES.items():
        a = s[k]["1-4"]
        out.append(f"| {name} | {a['n']} | {_f(a['r5'])} | {_f(a['r8'])} | {_f(a['r20'])} | {_f(a['ctx8'])} "
                   f"| {_f(a['rr'])} | {a['returned8']:.1f} | {_f(a['r8_requester'])} | {_f(a['r8_other'])} |")
    out += ["", "Per category, R@8 hits / context R@8:", "",
            "| category | n | " + " | ".join(NAMES[k] for k in NAMES) + " |", "|---|---|" + "---|" * len(NAMES)]
    for g, gname in GROUP_NAMES.items():
        n = s["search_locomo"][g]["n"]
        if not n:
            continue
        out.append(f"| {gname} | {n} | " + " | ".join(
            f"{_f(s[k][g]['r8'])} / {_f(s[k][g]['ctx8'])}" for k in NAMES) + " |")
    places = ("hit", "neighbour", "ranked_9_20", "below_20", "no_term")
    out += ["", "Where the evidence turns are (categories 1–4, then search with LoCoMo's dates per category): "
                "a hit in the first 8; shown only as a neighbour of one; missed, ranked 9–20; missed, matching a "
                "query term but below 20; missed, matching no term of the question (no lexical ranking makes "
                "it a hit):", "",
            "| system | evidence | hit | neighbour | ranked 9–20 | below 20 | no term |", "|---|---|---|---|---|---|---|"]

    def places_row(name: str, a: dict[str, Any]) -> str:
        total = sum(a["places"].values())
        return f"| {name} | {total} | " + " | ".join(f"{a['places'][p]}" for p in places) + " |"
    for k, name in NAMES.items():
        out.append(places_row(name, s[k]["1-4"]))
    for g, gname in GROUP_NAMES.items():
        if g != "1-4" and s["search_locomo"][g]["n"]:
            out.append(places_row(f"search, LoCoMo's dates, {gname}", s["search_locomo"][g]))
    abl = results.get("ablation")
    if abl:
        full = {v: s[f"search_{v}"]["1-4"] for v in ("locomo", "recent")}
        out += ["", "Ablation, categories 1–4: each weight set to 0 with the others on "
                    "(R@8 hits / context R@8, and the change from the full ranking):", "",
                "| without | LoCoMo's dates | Δ | dates ending yesterday | Δ |", "|---|---|---|---|---|",
                f"| (nothing: full ranking) | {_f(full['locomo']['r8'])} / {_f(full['locomo']['ctx8'])} | | "
                f"{_f(full['recent']['r8'])} / {_f(full['recent']['ctx8'])} | |"]
        for w, by in abl.items():
            cells = []
            for v in ("locomo", "recent"):
                a = by[v]
                cells += [f"{_f(a['r8'])} / {_f(a['ctx8'])}",
                          f"{a['r8'] - full[v]['r8']:+.3f} / {a['ctx8'] - full[v]['ctx8']:+.3f}"]
            out.append(f"| `{w}` | " + " | ".join(cells) + " |")
    out += ["", "Settings: `" + ", ".join(f"{k}={v}" for k, v in sorted(results["settings"].items())) + "`",
            "", f"`{results['summary']}`", ""]
    return "\n".join(out)


def chart(results: dict[str, Any], path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    s = results["systems"]
    groups = [g for g in ("1", "2", "3", "4", "1-4") if s["search_locomo"][g]["n"]]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    width = 0.8 / len(NAMES)
    for ax, key, title in ((axes[0], "r8", "recall@8, hits"), (axes[1], "ctx8", "recall@8, hits + neighbours")):
        for j, k in enumerate(NAMES):
            ax.bar([i + j * width for i in range(len(groups))], [s[k][g][key] for g in groups], width,
                   label=NAMES[k])
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], [f"cat {g}" for g in groups])
        ax.set_title(title)
        ax.set_ylim(0, 1)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("history-search eval (LoCoMo format)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return str(path)
