"""Ship the SQL (the plan and its scripts) inside the package as history_search/_sql.

Everything else is declared in pyproject.toml. The copy is made at build time
only (sdist/wheel); an editable install reads the SQL from the checkout, so
there is never a stale second copy next to the sources. The pgTAP files
(db/tests) and the pytest suite need the repository's harness and are left
out of both the sdist and the wheel (MANIFEST.in): run them from a clone.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
SQL_ITEMS = ("db/deploy", "db/revert", "db/verify", "db/functions", "db/citus", "sqitch.plan", "sqitch.conf")


def _ignore(_dir, names):
    return [n for n in names if n == "__pycache__" or n.endswith((".pyc", "~"))]


class build_py_with_sql(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "history_search" / "_sql"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for item in SQL_ITEMS:
            src = ROOT / item
            (target / item).parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, target / item, ignore=_ignore)
            elif src.is_file():
                shutil.copy2(src, target / item)
        if not (target / "sqitch.plan").is_file():
            raise RuntimeError(f"sqitch.plan not found in {ROOT}: cannot ship the SQL")


class sdist_with_sql(sdist):
    """Make sure an sdist carries the SQL so a wheel built from it has it too."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        for item in SQL_ITEMS:
            src = ROOT / item
            dst = Path(base_dir) / item
            if dst.exists():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, ignore=_ignore)
            elif src.is_file():
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": build_py_with_sql, "sdist": sdist_with_sql})
