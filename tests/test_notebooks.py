"""The notebooks in notebooks/ run top to bottom (nbclient + ipykernel), on a small fixture store.

The kernel is this test's own interpreter (a temporary kernelspec pointing at sys.executable), so the
notebooks see exactly the echo_duck under test. The committed notebooks carry no outputs; plots land as
PNG files in the folder ECHO_DUCK_NOTEBOOK_FIGURES names."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
FIGURES = ("tiers", "decay_curves", "importance_histogram")
LONG = os.environ.get("ECHO_DUCK_LONG") == "1"


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A python3 kernelspec for sys.executable, found before any other, and a private temp folder."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (echo_duck tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    scratch = tmp_path / "tmp"  # the notebooks' default stores go here, and go with tmp_path
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.delenv("ECHO_DUCK_NOTEBOOK_DB", raising=False)
    monkeypatch.delenv("ECHO_DUCK_NOTEBOOK_AGENT_DB", raising=False)
    monkeypatch.delenv("ECHO_DUCK_NOTEBOOK_NOW", raising=False)
    return tmp_path


def execute(name: str) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=120,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def outputs_text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts += [str(out.get("data", {}).get(kind, "")) for kind in ("text/plain", "text/html")]
    return "\n".join(parts)


@pytest.mark.parametrize("name", ["analyst_tour.ipynb", "agent_builder_tour.ipynb"])
def test_committed_notebooks_are_clean(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 5  # documentation, not a script


@pytest.mark.skipif(not LONG, reason="the default fixture path runs with ECHO_DUCK_LONG=1; the next test covers the notebook")
def test_analyst_tour_builds_its_own_fixture_by_default(kernel_env, monkeypatch):
    figures = kernel_env / "figures"
    monkeypatch.setenv("ECHO_DUCK_NOTEBOOK_FIGURES", str(figures))
    nb = execute("analyst_tour.ipynb")
    for name in FIGURES:
        png = figures / f"{name}.png"
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
    text = outputs_text(nb)
    # The default store was built under the private temp folder, and its archive was read by Polars.
    stores = list((kernel_env / "tmp").glob("echo_duck_tour_*/tour.duckdb"))
    assert len(stores) == 1 and stores[0].with_name("tour_archive").is_dir()
    assert "archived memories, the same ids in Polars and DuckDB" in text
    assert "higher_provenance" in text and "pending" in text  # contradictions were shown
    assert "which package manager does the project use?" in text  # the retrieval log was shown


@pytest.mark.slow
def test_analyst_tour_runs_read_only_on_the_store_it_is_given_and_saves_its_plots(kernel_env, monkeypatch, tmp_path):
    from echo_duck.bench.tour_fixture import build_tour_store

    tour = build_tour_store(tmp_path / "given" / "store.duckdb")
    before = tour.path.read_bytes()
    archive_before = sorted((p.relative_to(tour.archive_dir), p.stat().st_size) for p in tour.archive_dir.rglob("*.parquet"))
    monkeypatch.setenv("ECHO_DUCK_NOTEBOOK_DB", str(tour.path))
    monkeypatch.setenv("ECHO_DUCK_NOTEBOOK_NOW", tour.now.isoformat())
    monkeypatch.setenv("ECHO_DUCK_NOTEBOOK_FIGURES", str(tmp_path / "figs"))
    nb = execute("analyst_tour.ipynb")
    text = outputs_text(nb)
    assert f"store: {tour.path}" in text
    assert not list((kernel_env / "tmp").glob("echo_duck_tour_*"))  # no fixture was built
    assert "archived memories, the same ids in Polars and DuckDB" in text
    assert "higher_provenance" in text and "(pending)" in text  # contradictions were shown
    assert "which package manager does the project use?" in text  # the retrieval log was shown
    assert tour.path.read_bytes() == before  # read-only: not one byte changed
    assert sorted((p.relative_to(tour.archive_dir), p.stat().st_size) for p in tour.archive_dir.rglob("*.parquet")) == archive_before
    for name in FIGURES:
        png = tmp_path / "figs" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000


@pytest.mark.slow
def test_agent_builder_tour_runs(kernel_env):
    nb = execute("agent_builder_tour.ipynb")
    text = outputs_text(nb)
    stores = list((kernel_env / "tmp").glob("echo_duck_agent_*/agent.duckdb"))
    assert len(stores) == 1
    assert "ProvenanceConflict" in text and "RejectedWrite" in text
    assert "'ok': False" in text or '"ok": false' in text  # a tool refusal came back as data

    import echo_duck

    with echo_duck.open(stores[0], agent_id="coder", read_only=True, embedder=None, admin=True) as mem:
        assert [v.status for v in mem.history("package_manager").versions] == ["superseded", "active"]
        assert mem.sql("SELECT count(*) AS n FROM recall_log")["n"][0] >= 2
        assert mem.sql("SELECT count(*) AS n FROM episodes")["n"][0] == 1
        assert mem.sql("SELECT count(*) AS n FROM memories WHERE provenance = 2 AND status = 'active'")["n"][0] >= 2
        assert mem.sql("SELECT count(*) AS n FROM memory_events WHERE actor LIKE 'tool:%'")["n"][0] >= 3
        assert set(mem.sql("SELECT path FROM blocked_writes")["path"]) == {"api", "tool"}
