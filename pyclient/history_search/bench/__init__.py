"""``history-search bench``: seeded corpus, bulk load and the F/B1/B0/P1/P2 benchmark."""

from __future__ import annotations

import argparse
from typing import Sequence


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .runner import add_arguments as _add
    _add(parser)


def run(args: argparse.Namespace) -> int:
    from .runner import run as _run
    return _run(args)


def main(argv: Sequence[str] | None = None) -> int:
    from .runner import main as _main
    return _main(argv)
