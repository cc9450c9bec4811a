"""``history-search eval``: relevance of search on LoCoMo-format data, side by side with BM25 and ts_rank."""


def add_arguments(parser):
    from .runner import add_arguments as _add
    return _add(parser)


def run(args) -> int:
    from .runner import run as _run
    return _run(args)


def main(argv=None) -> int:
    from .runner import main as _main
    return _main(argv)
