"""`echo-duck bench perf` at a tiny size: every system runs end to end (no timing asserts)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from echo_duck.bench import perf
from echo_duck.cli.main import cli
from echo_duck.embed.embedder import default_embedder
from echo_duck.errors import InvalidInput

SIZE = 300


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    if default_embedder() is None:
        pytest.skip("the default embedding model is not installed")
    return tmp_path_factory.mktemp("perf")  # shared: the embedding cache is filled once


def run_one(out, system):
    result = perf.run([SIZE], [system], repeats=1, out=out)
    entry = result["results"][str(SIZE)][system]
    assert "variants" in entry, entry
    for variant in entry["variants"].values():
        assert 0 < variant["mean_hits"] <= perf.K  # echo_duck's gate may drop weak candidates
        assert variant["excluded"]["n"] == variant["included"]["n"] == perf.N_QUERIES
    assert entry["ingest_rows_per_s"] > 0 and entry["ingest_with_embedding_rows_per_s"] > 0
    assert entry["peak_rss_mb"] > 0
    assert (out / "perf.json").exists() and (out / "perf.md").exists()
    return result, entry


@pytest.mark.slow
def test_echo_duck_gets_the_precomputed_vectors_and_a_stage_breakdown(out):
    result, entry = run_one(out, "echo_duck")
    lookups = entry["embedder_lookups"]  # no model run for the base rows: a precomputed vector or the scanner's
    assert lookups["real_model"] == 0 and lookups["precomputed"] + lookups["scanner"] == SIZE and lookups["scanner"] > 0
    assert set(entry["variants"]) == {"hybrid", "filtered"}
    stages = {s["stage"] for s in entry["stages"]["stages"]}
    hooked = {"eligible candidates + decay terms (in-process copy, with its state query)", "fusion (Python)",
              "vector top-N (in-process: int8 first pass, float32 scores)",
              "queue reinforce + log (recall ids, 64 per query; a batch write every 64)"}
    kept = {"caller groups + settings (kept; SQL after a write)",
            "winners' rows + conflicts (kept; SQL for rows not kept)"}  # read from SQL only after writes: p50 ~0
    assert hooked | kept <= stages
    assert all(s["p50_ms"] > 0 for s in entry["stages"]["stages"] if s["stage"] in hooked)  # each stage was timed
    caches = entry["recall_caches"]
    assert 0 < caches["winners_rows"] <= 4096 and caches["query_words"] > 0 and caches["approx_mb"] > 0
    assert result["results"][str(SIZE)]["lifecycle"]["decay_plus_archive_s"] >= 0
    assert entry["disk_mb"] > 0


@pytest.mark.slow
def test_numpy_floor_and_the_cache_is_reused(out):
    result, entry = run_one(out, "numpy")
    assert result["meta"]["embedding_s"] == {}  # the first test embedded the memories
    assert entry["disk_mb"] is None


@pytest.mark.slow
def test_lancedb(out):
    pytest.importorskip("lancedb")
    _, entry = run_one(out, "lancedb")
    assert set(entry["variants"]) == {"hybrid", "hybrid_limit10"} and entry["disk_mb"] > 0


@pytest.mark.slow
def test_sqlite_vec(out):
    pytest.importorskip("sqlite_vec")
    pytest.importorskip("pysqlite3")
    _, entry = run_one(out, "sqlite")
    assert entry["disk_mb"] > 0


@pytest.mark.slow
def test_cli_json_and_markdown(out):
    result = CliRunner().invoke(cli, ["bench", "perf", "--sizes", str(SIZE), "--systems", "numpy,echo_duck",
                                      "--repeats", "1", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["ratios"][str(SIZE)]) == {"numpy"}, report["results"]
    markdown = (out / "perf.md").read_text()
    assert "numpy floor" in markdown and "pre-segmented" in markdown and "Where echo_duck's recall time goes" in markdown


def test_cli_refuses_bad_sizes_and_systems():
    result = CliRunner().invoke(cli, ["bench", "perf", "--sizes", "ten", "--out", "unused"])
    assert result.exit_code == 2 and "--sizes" in result.output
    result = CliRunner().invoke(cli, ["bench", "perf", "--systems", "postgres", "--out", "unused"])
    assert result.exit_code == 2 and "--systems" in result.output


def test_parse_sizes():
    assert perf.parse_sizes("10k, 100k,1M,10k") == [10_000, 100_000, 1_000_000]
    with pytest.raises(InvalidInput):
        perf.parse_sizes("5")
