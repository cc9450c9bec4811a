"""Search results as the compact, attributed text an agent reads.

:func:`to_prompt` renders a :class:`~history_search.models.SearchResult`
within a character budget (search results compete with everything else for
the prompt)::

    search_history: 2 hits, best first (status ok; evidence budget: 7 used, 393 left)
    roles: requester = the person you are answering; you = you; other = anyone else

    [1] msg-17 | alice (requester) | 2026-11-24 09:12 UTC | in acme/#launch
        Launch is June 12 unless the security review slips.
        - before: msg-16 | bob (other) | 2026-11-24 09:10 UTC
            Do we have a date yet?
        - after: msg-18 | carol (other) | 2026-11-24 09:15 UTC
            Landing page is ready.

Every hit keeps its id, speaker and role, time and conversation on one line;
its body and its neighbours (context, in conversation order) are indented
below it, so no message text can pass for a hit line. When the text would
exceed ``max_chars``: whole neighbours are dropped first (the farthest from
their hit first, lowest-ranked hits first), then whole hits (lowest ranked
first); only if the best hit alone does not fit is its *body* shortened — never
its id line. A final line says what was omitted. The omitted messages were
still returned (and count against the run's budget); this is only about what
the prompt shows. A body the search itself cut (``body_truncated``: the stored
message is longer than ``search_settings.max_returned_body_bytes``) is followed
by a line saying so.
"""

from __future__ import annotations

from datetime import timezone
from typing import Iterable

from .models import Neighbour, SearchHit, SearchResult

__all__ = ["to_prompt"]

_HIT_BODY = "    "
_NB_HEAD = "    - "
_NB_BODY = "        "


def _clean(field: str) -> str:
    """A header field on one line: ids are the runtime's, but any line break or control
    character is shown escaped (``\\n``, ``\\u2028``) rather than trusted."""
    if field.isprintable():
        return field
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in field)


def _time(h: SearchHit | Neighbour) -> str:
    return h.sent_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _speaker(h: SearchHit | Neighbour) -> str:
    return f"{_clean(h.speaker_id)} ({_clean(h.speaker_role)})"


def _body_lines(body: str, indent: str, limit: int | None = None, server_cut: bool = False) -> list[str]:
    text = body
    cut = 0
    if limit is not None and len(text) > limit:
        cut = len(text) - limit
        text = text[:limit].rstrip() + "…"
    # splitlines() knows every line break (\r, \u2028, \x0c…): each line of the body is indented.
    lines = [indent + line for line in text.splitlines()] or [indent + "(empty message)"]
    if cut:
        lines.append(f"{indent}[message shortened to fit: {cut} more characters not shown]")
    if server_cut:
        lines.append(f"{indent}[message cut by the search: the stored text is longer than what was returned]")
    return lines


def _summary(result: SearchResult) -> list[str]:
    n = len(result.hits)
    what = "no hits" if n == 0 else f"{n} hit{'s' if n != 1 else ''}, best first"
    lines = [f"search_history: {what} (status {result.status}; evidence budget: "
             f"{result.budget_used} used, {result.budget_remaining} left)"]
    if n:
        lines.append("roles: requester = the person you are answering; you = you; other = anyone else")
    if result.budget_remaining == 0:
        lines.append("note: this turn's evidence budget is used up; further searches cannot return new messages")
    elif result.status == "search_budget_exhausted":
        lines.append("note: the evidence budget ran out during this search; some matches were withheld")
    return lines


def _omission_note(max_chars: int, neighbours: int, hits: Iterable[SearchHit], first_rank: int,
                   shortened: bool) -> list[str]:
    hits = list(hits)
    parts = []
    if neighbours:
        parts.append(f"{neighbours} context message{'s' if neighbours != 1 else ''}")
    if hits:
        ids = [_clean(h.message_id) for h in hits[:8]]
        more = f" and {len(hits) - 8} more" if len(hits) > 8 else ""
        ranks = f"#{first_rank}" if len(hits) == 1 else f"#{first_rank}-#{first_rank + len(hits) - 1}"
        parts.append(f"{len(hits)} hit{'s' if len(hits) != 1 else ''} ranked {ranks} ({', '.join(ids)}{more})")
    if shortened:
        parts.append("the end of hit #1's text")
    if not parts:
        return []
    advice = " Search more narrowly (fewer words, a time range) to see omitted hits." if hits else ""
    return [f"[omitted to fit {max_chars} characters: {'; '.join(parts)}.{advice}]"]


def to_prompt(result: SearchResult, max_chars: int = 4000) -> str:
    """Render ``result`` as at most ``max_chars`` characters of attributed text."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    hits = list(result.hits)

    # Neighbours in the order they are dropped: farthest first, lowest-ranked hit first.
    drop_order: list[tuple[int, str, int]] = []
    for distance in (1, 0):
        for i in reversed(range(len(hits))):
            for side in ("after", "before"):
                if distance < len(getattr(hits[i], side)):
                    drop_order.append((i, side, distance))

    def render(keep: int, dropped: set[tuple[int, str, int]], body_limit: int | None = None) -> str:
        lines = _summary(result)
        for i in range(keep):
            h = hits[i]
            lines.append("")
            lines.append(f"[{i + 1}] {_clean(h.message_id)} | {_speaker(h)} | {_time(h)} | "
                         f"in {_clean(h.conversation_id)}")
            lines += _body_lines(h.body, _HIT_BODY, body_limit if i == 0 else None, h.body_truncated)
            context = [("before", k, h.before[k]) for k in reversed(range(len(h.before)))]
            context += [("after", k, h.after[k]) for k in range(len(h.after))]
            for side, k, n in context:
                if (i, side, k) in dropped:
                    continue
                lines.append(f"{_NB_HEAD}{side}: {_clean(n.message_id)} | {_speaker(n)} | {_time(n)}")
                lines += _body_lines(n.body, _NB_BODY, server_cut=n.body_truncated)
        omitted_nb = sum(1 for (i, _s, _k) in dropped if i < keep)
        note = _omission_note(max_chars, omitted_nb, hits[keep:], keep + 1, body_limit is not None)
        if note:
            lines.append("")
            lines += note
        return "\n".join(lines)

    keep = len(hits)
    dropped: set[tuple[int, str, int]] = set()
    text = render(keep, dropped)
    if len(text) <= max_chars:
        return text
    for item in drop_order:
        dropped.add(item)
        text = render(keep, dropped)
        if len(text) <= max_chars:
            return text
    while keep > 1:
        keep -= 1
        text = render(keep, dropped)
        if len(text) <= max_chars:
            return text
    if keep == 1:
        # The best hit alone is too long: shorten its body (longest prefix that fits), never its id line.
        lo, hi = 0, len(hits[0].body)
        if len(render(1, dropped, 0)) <= max_chars:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if len(render(1, dropped, mid)) <= max_chars:
                    lo = mid
                else:
                    hi = mid - 1
            return render(1, dropped, lo)
        keep = 0
        text = render(0, dropped)
    if len(text) <= max_chars:
        return text
    # Not even the summary fits: no hit line is in the text, so a plain cut cuts none.
    return text[: max_chars - 1] + "…" if max_chars > 1 else text[:max_chars]
