"""Shared fixtures: real DuckDB files in tmp_path, never mocks."""

from __future__ import annotations

from datetime import datetime

import pytest

import echo_duck

T0 = datetime(2026, 1, 1, 12, 0, 0)


class Clock:
    """A controllable clock so decay and ordering tests are deterministic."""

    def __init__(self, start: datetime = T0):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        from datetime import timedelta

        self.now = self.now + timedelta(**delta)


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "mem.duckdb"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def host(tmp_path):
    """An admin store on the deterministic embedder: the trusted host application of the trust tests."""
    with echo_duck.open(tmp_path / "s.duckdb", admin=True, embedder="hash") as h:
        yield h


@pytest.fixture
def red_team(host):
    """``host`` with team "red": mallory, who may publish to it, and victim."""
    host.grant(team="red", agent_id="mallory", publish=True)
    host.grant(team="red", agent_id="victim")
    return host


@pytest.fixture
def mem(db_path):
    with echo_duck.open(db_path, admin=True) as m:
        yield m


def copy_store(src, dst) -> None:
    """Copy a closed store file and its Parquet archive folder (``<stem>_archive``), if it has one: a test
    that needs a big store builds it once (a module fixture) and works on a copy."""
    import shutil
    from pathlib import Path

    src, dst = Path(src), Path(dst)
    shutil.copyfile(src, dst)
    archive = src.with_name(f"{src.stem}_archive")
    if archive.is_dir():
        shutil.copytree(archive, dst.with_name(f"{dst.stem}_archive"))


def plain_connection(path, *, read_only: bool = False):
    """A plain duckdb connection on a closed store, extensions loaded as echo_duck does: a test that makes a store
    look older, or reads it as an analyst would."""
    import duckdb

    from echo_duck.storage.extensions import load_extensions, quote_literal

    con = duckdb.connect(":memory:")
    load_extensions(con)
    con.execute(f"ATTACH {quote_literal(str(path))} AS mem" + (" (READ_ONLY)" if read_only else ""))
    con.execute("USE mem")
    return con


@pytest.fixture(scope="module")
def rules_only():
    """The write scanner's rules without the model (the classifier's embedder is missing on purpose)."""
    import warnings

    from echo_duck.write.scan.classifier import Classifier
    from echo_duck.write.scan.verdict import Scanner

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scanner = Scanner(Classifier(lambda: None))
        scanner.scan("warm up")
    return scanner
