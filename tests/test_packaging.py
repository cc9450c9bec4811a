"""The sdist and the wheel: license and metadata, dependency bounds, psycopg's
implementation as an extra, the SQL shipped, the tests left out (they need the
repository's harness). Built without isolation from a copy of the sources."""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tracked_copy(dest: Path) -> Path:
    """The files git tracks (what a clone has), copied to ``dest``; falls back to the tree."""
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if proc.returncode == 0 and proc.stdout:
        names = [n for n in proc.stdout.decode().split("\0") if n]
    else:  # not a git checkout: everything but the usual debris
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not {".venv", ".git", "__pycache__", "build", "dist"} & set(p.parts)]
    for name in names:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def build(kind: str, src: Path, out: Path) -> Path:
    out.mkdir(exist_ok=True)
    code = f"import sys; from setuptools import build_meta; print(build_meta.build_{kind}(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=src, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pkg")
    sdist = build("sdist", tracked_copy(tmp / "src"), tmp / "dist")
    # The wheel is built from the unpacked sdist, as pip would from PyPI.
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", filter="data")
    (unpacked,) = (tmp / "unpacked").iterdir()
    wheel = build("wheel", unpacked, tmp / "dist")
    return sdist, wheel


def sdist_names(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as tar:
        return sorted(m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name and m.isfile())


def test_the_sdist_has_the_sql_and_the_license_and_no_tests(artifacts):
    sdist, _ = artifacts
    names = sdist_names(sdist)
    assert "LICENSE" in names and "README.md" in names and "sqitch.plan" in names
    for kind in ("deploy", "revert", "verify"):
        assert f"db/{kind}/schema.sql" in names
    assert "db/functions/_hmac_sha256.sql" in names
    assert [n for n in names if n.startswith(("tests/", "db/tests/")) or n == "conftest.py"] == []


def test_the_wheel_carries_the_sql_and_the_license(artifacts):
    _, wheel = artifacts
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = email.message_from_bytes(
            z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))))
    assert "history_search/_sql/sqitch.plan" in names
    assert "history_search/_sql/db/deploy/schema.sql" in names
    assert "history_search/_sql/db/functions/_hmac_sha256.sql" in names
    assert not [n for n in names if "/db/tests/" in n or n.startswith("tests/")]
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert metadata["License-Expression"] == "Apache-2.0"


def test_metadata_bounds_and_extras(artifacts):
    _, wheel = artifacts
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))
    classifiers = meta.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Topic :: Database" in classifiers
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in classifiers)
    requires = meta.get_all("Requires-Dist")
    unconditional = [r for r in requires if "extra ==" not in r]
    # Every runtime dependency has a lower and an upper bound.
    assert sorted(r.split(">")[0].split("<")[0].strip() for r in unconditional) == [
        "psycopg", "psycopg-pool", "yoyo-migrations"]
    for r in unconditional:
        assert ">=" in r and "<" in r.replace("<=", ""), r
    # psycopg's implementation is chosen with an extra, never forced.
    assert not any("binary" in r for r in unconditional)
    assert {"binary", "c", "test"} <= set(meta.get_all("Provides-Extra"))
    assert any(r.startswith("psycopg[binary]") and 'extra == "binary"' in r for r in requires)
    assert any(r.startswith("psycopg[c]") and 'extra == "c"' in r for r in requires)
    assert meta["Requires-Python"] == ">=3.11"
