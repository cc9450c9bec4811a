"""The markdown tables of a bench run (``results.md`` in ``--out``; docs/benchmarks.md, "Reading the output")."""

from __future__ import annotations

from typing import Any

def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _x(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}×"


def render(results: dict[str, Any]) -> str:
    cells = results["cells"]
    classes = list(cells[0]["classes"]) if cells else []  # the query classes, in the runner's order
    levels = sorted({c["concurrency"] for c in cells})
    where = ", on Citus (a coordinator and two workers)" if results.get("citus") else ""
    tenants = f" in {results['tenants']} tenants" if results.get("tenants", 1) > 1 else ""
    out = [f"### {results['corpus']['messages']:,} messages{tenants}, seed {results['seed']}{where}", ""]
    load = results.get("bulk_load") or {}
    if load.get("seconds"):
        out += [f"Bulk load: {load['seconds']['total']:.1f} s ({load['messages_per_s']:,.0f} messages/s).", ""]
    dist = results.get("distribute")
    if dist:
        out += [f"`distribute` of the loaded coordinator: {dist['seconds']} s, then VACUUM ANALYZE "
                f"{dist['vacuum_analyze_s']} s; tenants per worker: "
                + ", ".join(f"{node} {n}" for node, n in dist["tenants_per_node"].items()) + ".", ""]
    if results.get("searched_tenants") and results.get("tenants", 1) > 1:
        out += ["Searches run in " + ", ".join(f"{t['tenant']} ({t['node']})" for t in results["searched_tenants"])
                + ".", ""]

    out += ["Full mix:", "", "| c | shape | n | p50 ms | p95 ms | p99 ms | max ms | q/s |",
            "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        m = c["mix"]
        out.append(f"| {c['concurrency']} | {c['shape']} | {m['n']} | {_ms(m['p50_ms'])} | {_ms(m['p95_ms'])} "
                   f"| {_ms(m['p99_ms'])} | {_ms(m['max_ms'])} | {m['throughput_qps']} |")
    for level in levels:
        out += ["", f"Per class, concurrency {level} (p50 / p99 ms):", "",
                "| shape | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
        for c in (c for c in cells if c["concurrency"] == level):
            out.append(f"| {c['shape']} | " + " | ".join(
                f"{_ms(c['classes'][k]['p50_ms'])} / {_ms(c['classes'][k]['p99_ms'])}" for k in classes) + " |")
    f1 = next((c for c in cells if c["shape"] == "F" and c["concurrency"] == 1), None)
    if f1 and f1.get("visible_sets"):
        out += ["", "F per visible set, concurrency 1 (p50 / p99 ms):", "",
                "| visible set | n | p50 / p99 |", "|---|---|---|"]
        for vs, s in f1["visible_sets"].items():
            out.append(f"| {vs} | {s['n']} | {_ms(s['p50_ms'])} / {_ms(s['p99_ms'])} |")
    out += ["", "Ratios (p50 / p99):", "", "| c | F/B1 | F/B1r | F/P1 | F/P2 |", "|---|---|---|---|---|"]
    for level, r in sorted(results["ratios"].items(), key=lambda kv: int(kv[0])):
        out.append(f"| {level} | " + " | ".join(
            f"{_x(r[k]['mix']['p50'])} / {_x(r[k]['mix']['p99'])}" if k in r else "–"
            for k in ("F/B1", "F/B1r", "F/P1", "F/P2")) + " |")
    ing = results.get("ingest")
    if ing:
        out += ["", f"Ingest through `post_message`, {ing['clients']} clients, {ing['wall_s']} s: "
                    f"{ing['messages_per_s']:,.0f} messages/s, p50 {ing['p50_ms']} ms, p99 {ing['p99_ms']} ms, "
                    f"max {ing['max_ms']} ms, {ing['stalls_over_100ms']} stalls over 100 ms."]
    trips = results.get("search_round_trips")
    if trips:
        out += ["", "Commands (round trips) sent to the workers per search (pg_stat_statements, "
                    f"{trips.get('searches')} searches in {trips.get('context')}): "
                    + (f"{trips['statements_per_search']}; most frequent: "
                       + ", ".join(f"`{k}` {v}" for k, v in trips["most_frequent"].items())
                       if "statements_per_search" in trips else trips.get("error", "not counted")) + "."]
    disk = results.get("disk")
    if disk:
        out += ["", "On disk, MB per million messages:", "", "| table | total | heap | indexes |", "|---|---|---|---|"]
        per_m = 1e6 / max(1, results["corpus"]["messages"]) / 2**20
        for name, d in disk.items():
            if name.startswith("_"):
                continue
            idx = ", ".join(f"{i} {b * per_m:.1f}" for i, b in sorted(d["indexes"].items()))
            out.append(f"| {name} | {d['total_mb_per_million_messages']} | {d['heap_bytes'] * per_m:.1f} | {idx} |")
    out += ["", f"`{results['summary']}`", ""]
    return "\n".join(out)
