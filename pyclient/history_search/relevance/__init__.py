"""``history-search eval``: relevance of search on LoCoMo-format data, side by side with BM25 and ts_rank."""

from __future__ import annotations

import argparse
from typing import Sequence


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .runner import add_arguments as _add
    return _add(parser)


def run(args: argparse.Namespace) -> int:
    from .runner import run as _run
    return _run(args)


def main(argv: Sequence[str] | None = None) -> int:
    from .runner import main as _main
    return _main(argv)
