"""vss and fts load from their wheels by file path. DuckDB checks each file's signature on LOAD (~0.2 s for the two);
a locked-down connection skips the check for files that already passed it in this process, unchanged since.
What must hold: a changed file is checked again, a connection with files allowed always checks, and a
locked-down connection, which could load unsigned code, cannot load anything at all."""

from __future__ import annotations

import duckdb
import pytest

import echo_duck
from echo_duck.errors import ExtensionMissing
from echo_duck.storage import extensions
from echo_duck.storage.connection import connect
from echo_duck.storage.extensions import quote_literal


def test_a_changed_extension_file_is_checked_again(tmp_path, monkeypatch):
    real = extensions.extension_path
    with echo_duck.open(tmp_path / "first.duckdb", embedder="hash"):
        pass
    assert extensions.signatures_checked()
    tampered = tmp_path / "fts.duckdb_extension"
    data = bytearray(real("fts").read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte of code: the signature no longer matches
    tampered.write_bytes(bytes(data))
    monkeypatch.setattr(extensions, "extension_path", lambda name: tampered if name == "fts" else real(name))
    assert not extensions.signatures_checked()
    with pytest.raises(ExtensionMissing, match="fts"):
        echo_duck.open(tmp_path / "second.duckdb", embedder="hash")
    with pytest.raises(ExtensionMissing, match="fts"):  # a failed check is not remembered as passed
        echo_duck.open(tmp_path / "third.duckdb", embedder="hash")


def test_a_connection_that_skipped_the_check_cannot_load_any_file(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash"):
        pass
    assert extensions.signatures_checked()
    con = connect(tmp_path / "m.duckdb")
    try:
        assert con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0] is True
        evil = tmp_path / "evil.duckdb_extension"  # a real extension binary under a name not yet loaded
        evil.write_bytes(extensions.extension_path("fts").read_bytes())
        with pytest.raises(duckdb.Error, match="disabled"):
            con.execute(f"LOAD {quote_literal(str(evil))}")
        with pytest.raises(duckdb.Error):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()


def test_a_connection_with_files_allowed_always_checks(tmp_path):
    with echo_duck.open(tmp_path / "m.duckdb", embedder="hash"):
        pass
    con = connect(tmp_path / "m.duckdb", allow_files=True)
    try:
        assert con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0] is False
    finally:
        con.close()
