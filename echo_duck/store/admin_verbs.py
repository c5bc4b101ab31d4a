"""The admin verbs of the facade: memberships, publishing rights, settings, SQL and the event chain.

A mixin of ``EchoDuck`` (facade.py). Every verb here needs an admin handle
(``echo_duck.open(path, admin=True)``); an agent handle gets ``PermissionDenied``. Each change is
logged in ``memory_events`` (memory_id NULL) so the history of who could see and write what is complete.

SQL (SPEC T4). ``sql(q)`` runs one SELECT (or EXPLAIN of one, without ANALYZE) on a second connection
to the store inside a ``READ ONLY`` transaction: nothing the statement says can write to the store,
define a macro or table, or advance a sequence. The DuckDB instance has no filesystem access beyond the
store, its archive and DuckDB's spill folder ``<store>.tmp``, and its configuration is locked
(storage/connection.py), so ``read_csv``, ``read_text``, ``glob``, ``COPY … TO`` and ``SET`` fail too,
unless the admin handle was opened with ``allow_files=True``. Table functions that act on the instance
rather than read (``enable_logging``, ``checkpoint``, ``arrow_scan``, ``query``, …) are refused by name,
found in DuckDB's own parse of the statement. ``sql(q, write=True)`` runs in an echo_duck transaction:
the statement itself is logged (action ``sql``) and so is every setting it changed (action ``setting``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..models import Memory
from ..storage.connection import CATALOG, translate_errors
from ..storage.event_chain import ChainReport
from ..storage.event_chain import verify as verify_chain
from ..write import validate
from ..write.scan.normalise import identity

if TYPE_CHECKING:  # polars loads on the first frame returned (sql(), audit()), not at import
    import polars as pl


def _empty_frame() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame()


_READ_STATEMENTS = {"SELECT", "EXPLAIN"}
# EXPLAIN, its options and ANALYZE at the start of an EXPLAIN statement (only comments can come before them).
_WORD = re.compile(r"\w+")
# Functions a READ ONLY transaction does not stop: they change the DuckDB instance (logging to files, profiling,
# checkpoints; enable_logging to a path outside the allowed folders aborts the process), read Python objects by
# address (arrow_scan), or run SQL handed to them as a string (query, json_execute_serialized_sql). Found by name in
# DuckDB's own parse of the statement (json_serialize_sql), so no quoting, comment or string literal hides one.
_INSTANCE_FUNCTIONS = frozenset({
    "enable_logging", "disable_logging", "truncate_duckdb_logs", "write_log", "enable_profiling", "disable_profiling",
    "checkpoint", "force_checkpoint", "arrow_scan", "arrow_scan_dumb", "pandas_scan", "python_map_function",
    "json_execute_serialized_sql", "query", "query_table"})
RIGHT = re.compile(r"^publish:(public|team:[^\s]{1,200}|tenant:[^\s]{1,200})$")
KINDS = ("team", "tenant")


class AdminVerbs:
    # -- memberships and rights ------------------------------------------------------------------

    def grant(self, *, team: str | None = None, tenant: str | None = None, agent_id: str | None = None,
              publish: bool = False) -> None:
        """Make an agent (default: the one this handle acts as) a member of a team or tenant: it then
        reads that group's memories. ``publish=True`` also lets it write them (right
        ``publish:team:<id>`` / ``publish:tenant:<id>``)."""
        self._require_admin("grant")
        publish = validate.flag(publish, "publish")
        for kind, group, agent in self._memberships(team, tenant, agent_id):
            with self.db.transaction("grant"):
                self.db.run("grant_membership", agent_id=agent, kind=kind, group_id=group, now=self.now())
                self._log_store("grant", {"agent_id": agent, "kind": kind, "group_id": group})
                if publish:
                    self._grant_right(agent, f"publish:{kind}:{group}")

    def revoke(self, *, team: str | None = None, tenant: str | None = None, agent_id: str | None = None) -> None:
        """Remove a membership (and the right to publish there); that group's memories disappear from
        the agent's reads at once."""
        self._require_admin("revoke")
        for kind, group, agent in self._memberships(team, tenant, agent_id, granting=False):
            with self.db.transaction("revoke"):
                self.db.run("revoke_membership", agent_id=agent, kind=kind, group_id=group, now=self.now())
                self._log_store("revoke", {"agent_id": agent, "kind": kind, "group_id": group})
                self._revoke_right(agent, f"publish:{kind}:{group}")

    def grant_right(self, agent_id: str, right: str) -> None:
        """Grant ``publish:public``, ``publish:team:<id>`` or ``publish:tenant:<id>`` (``*`` for any
        group the agent belongs to): writing memories or documents in that scope needs it."""
        self._require_admin("grant_right")
        agent, right = self._right(agent_id, right)
        with self.db.transaction("grant_right"):
            self._grant_right(agent, right)

    def revoke_right(self, agent_id: str, right: str) -> None:
        self._require_admin("revoke_right")
        agent, right = self._right(agent_id, right, granting=False)
        with self.db.transaction("revoke_right"):
            self._revoke_right(agent, right)

    def rights(self, agent_id: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """Current memberships and rights, of one agent or of all: {'memberships': [...], 'rights': [...]}."""
        self._require_admin("rights")
        agent = validate.optional_text(agent_id, "agent_id", max_chars=200)
        with self.db.reading():
            return {"memberships": self.db.dicts("current_memberships", agent_id=agent),
                    "rights": self.db.dicts("current_rights", agent_id=agent)}

    def held(self, limit: int = 100) -> list[Memory]:
        """The review queue: every agent's memories the write scanner held (quarantined), oldest first, for
        approve() or reject(). Admin only: find() reads as the agent this handle acts as."""
        self._require_admin("held")
        with self.db.reading():
            rows = self.db.dicts("held_memories", limit=validate.positive_int(limit, "limit"))
        return [Memory.from_row(r) for r in rows]

    # -- settings --------------------------------------------------------------------------------

    def settings(self) -> dict[str, float]:
        """Every tunable of the settings table (decay base, archive threshold, ranking weights, …)."""
        with self.db.reading():
            return dict(self.db.run("all_settings").fetchall())

    def set_setting(self, name: str, value: float) -> None:
        """Change one tunable (admin only; logged with its old and new value)."""
        self._require_admin("set_setting")
        name = validate.text(name, "name", max_chars=200)
        value = validate.real(value, "value")
        if abs(value) == float("inf"):
            raise InvalidInput(f"value must be a finite number, got {value!r}")
        with self.db.transaction("set_setting"):
            current = dict(self.db.run("all_settings").fetchall())
            if name not in current:
                raise InvalidInput(f"no setting named {name!r}; the settings are {', '.join(sorted(current))}")
            _check_range(name, value)
            self.db.run("set_setting", name=name, value=value)
            self._log_settings(current)
        self._caches_changed()

    # -- SQL -------------------------------------------------------------------------------------

    def sql(self, query: str, params: Any = None, *, write: bool = False) -> pl.DataFrame:
        """Run one SQL statement and return a Polars frame (admin only). Read-only unless ``write=True``:
        see the module docstring for what read-only means here."""
        self._require_admin("sql")
        query = validate.text(query, "query")
        if validate.flag(write, "write"):
            return self._sql_write(query, params)
        with self.db.reading():
            with translate_errors("sql"):
                kind, text = self._one_statement(query)
                if kind not in _READ_STATEMENTS:
                    raise InvalidInput(f"sql() is read-only by default and this is a {kind} statement; "
                                       "pass write=True (CLI: --write)")
                called = sorted(self._functions_called(_explained(text) if kind == "EXPLAIN" else text)
                                & _INSTANCE_FUNCTIONS)
                if called:
                    raise InvalidInput(f"sql() is read-only and {called[0]}() changes the DuckDB instance or runs "
                                       "SQL of its own, which a read-only transaction does not stop; the read-only "
                                       "path refuses it (sql(..., write=True) runs it, logged)")
                return self._read_only(query, params)

    def _functions_called(self, select: str) -> set[str]:
        """The names (lower case) of every function a SELECT calls, read from DuckDB's parse tree."""
        tree = json.loads(self.db.con.execute("SELECT json_serialize_sql(?)", [select]).fetchone()[0])
        if tree.get("error"):
            raise InvalidInput("sql() is read-only and reads SELECT statements (and EXPLAIN of one) only; DuckDB says: "
                               f"{str(tree.get('error_message', ''))[:200]}")
        names: set[str] = set()
        stack: list[Any] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("function_name"), str):
                    names.add(node["function_name"].lower())
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        return names

    def _read_only(self, query: str, params: Any) -> pl.DataFrame:
        """A second connection to the same database, in a READ ONLY transaction, closed afterwards."""
        cursor = self.db.con.cursor()
        try:
            cursor.execute(f"USE {CATALOG}")
            for statement in self.db.session_sql:
                cursor.execute(statement)
            cursor.execute("BEGIN TRANSACTION READ ONLY")
            result = cursor.execute(query, params) if params is not None else cursor.execute(query)
            frame = result.pl() if result.description else _empty_frame()
            cursor.execute("ROLLBACK")
            return frame
        finally:
            cursor.close()

    def _sql_write(self, query: str, params: Any) -> pl.DataFrame:
        if self.read_only:
            raise InvalidInput("this store was opened read_only; sql(write=True) is not possible")
        with self.db.transaction("sql"):
            with translate_errors("sql"):
                kind, _ = self._one_statement(query)
                if kind == "TRANSACTION":
                    raise InvalidInput(f"sql(write=True) runs inside echo_duck's own transaction; a {kind} statement "
                                       "cannot run there")
                settings = dict(self.db.run("all_settings").fetchall())
                result = self.db.con.execute(query, params) if params is not None else self.db.con.execute(query)
                frame = result.pl() if result.description else _empty_frame()
                self._log_store("sql", None, reason=query[:4000])
                self._log_settings(settings)
        self._caches_changed()  # the statement may have changed what the in-process copies hold
        return frame

    def _one_statement(self, query: str) -> tuple[str, str]:
        statements = self.db.con.extract_statements(query)
        if len(statements) != 1:
            raise InvalidInput(f"sql() runs exactly one statement, got {len(statements)}")
        return statements[0].type.name, statements[0].query

    # -- the event chain -------------------------------------------------------------------------

    def verify_events(self) -> ChainReport:
        """Check the hash chain of memory_events (SPEC T6): the first broken link, if any (admin only)."""
        self._require_admin("verify_events")
        with self.db.reading():
            with translate_errors("verifying the event chain"):
                return verify_chain(self.db.con)

    # -- helpers ---------------------------------------------------------------------------------

    def _grant_right(self, agent: str, right: str) -> None:
        self.db.run("grant_right", agent_id=agent, right=right, now=self.now(), granted_by=self.caller.who)
        self._log_store("grant_right", {"agent_id": agent, "right": right})

    def _revoke_right(self, agent: str, right: str) -> None:
        self.db.run("revoke_right", agent_id=agent, right=right, now=self.now())
        self._log_store("revoke_right", {"agent_id": agent, "right": right})

    def _log_store(self, action: str, after: dict | None, *, reason: str | None = None, before: dict | None = None) -> None:
        self.db.run("log_store_event", now=self.now(), actor=self.caller.who, action=action, reason=reason,
                    before=None if before is None else json.dumps(before), after=None if after is None else json.dumps(after))

    def _log_settings(self, before: dict[str, float]) -> None:
        after = dict(self.db.run("all_settings").fetchall())
        for name in sorted(set(before) | set(after)):
            if before.get(name) != after.get(name):
                self._log_store("setting", {"name": name, "value": after.get(name)},
                                before={"name": name, "value": before.get(name)})

    def _right(self, agent_id: str, right: str, *, granting: bool = True) -> tuple[str, str]:
        agent = self._agent(agent_id, granting)
        right = validate.text(right, "right", max_chars=300).strip()
        if not RIGHT.match(right):
            raise InvalidInput(f"right must be publish:public, publish:team:<id> or publish:tenant:<id> "
                               f"('*' for any group), got {right!r}")
        return agent, right

    def _distinct_agent(self, agent: str) -> str:
        """Refuse an agent id a person would take for another the store knows (a member, a right holder, a writer):
        a grant puts its memories into other agents' prompts under its name (reviewer AK, session 56)."""
        mine = identity(agent)
        with self.db.reading():
            known = [k for (k,) in self.db.run("known_agent_ids").fetchall()]
        for other in known:
            if other != agent and identity(other) == mine:
                raise InvalidInput(f"agent_id {agent!r} reads as agent {other!r}, which this store knows; choose an id "
                                   "that does not")
        return agent

    def _agent(self, agent_id: str, granting: bool) -> str:
        """A grant's agent id is checked as a new one; a revocation takes any id the store may hold (one stored before
        ids were checked, or a look-alike granted then, must still be removable)."""
        if granting:
            return self._distinct_agent(validate.identifier(agent_id, "agent_id"))
        return validate.text(agent_id, "agent_id", max_chars=200)

    def _memberships(self, team, tenant, agent_id, *, granting: bool = True):
        agent = self._agent(agent_id, granting) if agent_id is not None else self.caller.agent_id
        pairs = [(k, validate.identifier(g, k, group=True) if granting else _group(g, k), agent)
                 for k, g in (("team", team), ("tenant", tenant)) if g is not None]
        if not pairs:
            raise InvalidInput("give team= or tenant=")
        return pairs


# What each tunable may be (settings.note says what it does): a share or confidence 0..1, a cosine -1..1, a pool a
# whole number from 1, a span of time or a weight from 0. archive_threshold=5 archived every decaying memory on the
# next decay(), and vector_pool=-1 was accepted. Settings not listed need only be finite.
_SHARE, _COSINE, _FROM_0 = (0.0, 1.0), (-1.0, 1.0), (0.0, float("inf"))
SETTING_RANGES = {
    **dict.fromkeys(("archive_threshold", "archived_weight", "compress_term_overlap", "contradiction_auto_confidence",
                     "contradiction_min_confidence", "gate_df_ratio", "importance_floor", "kb_importance",
                     "reinforce_min_relevance", "self_confidence_cap", "self_daily_gain", "self_helpful_step",
                     "self_snapshot_threshold", "self_unhelpful_step", "unhelpful_penalty"), _SHARE),
    **dict.fromkeys(("compress_similarity", "contradiction_similarity", "vector_min_similarity",
                     "vector_strong_similarity"), _COSINE),
    **dict.fromkeys(("archive_retention_days", "gc_retention_days", "importance_decay_days", "consolidation_idle_minutes",
                     "consolidation_lease_minutes", "rrf_k", "keyword_score_power", "vector_score_power",
                     "vector_weight_high", "vector_weight_low", "reinforce_top"), _FROM_0),
}
WHOLE_FROM_1 = ("keyword_pool", "vector_pool")


def _check_range(name: str, value: float) -> None:
    if name in WHOLE_FROM_1:
        if value < 1 or value != int(value) or value > 100_000:
            raise InvalidInput(f"{name} must be a whole number from 1 to 100,000, got {value!r}")
        return
    low, high = SETTING_RANGES.get(name, (-float("inf"), float("inf")))
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be between {low:g} and {high:g}, got {value!r}")


def _explained(statement: str) -> str:
    """The SELECT an EXPLAIN statement explains, found with DuckDB's own tokenizer (comments nest there, and a
    regex that ended one at the first ``*/`` read a different statement than DuckDB runs); EXPLAIN ANALYZE (which
    runs it, also as an option) is refused, and so is anything but a SELECT (by the caller's parse)."""
    import duckdb

    tokens = duckdb.tokenize(statement)

    def word(i: int) -> str:  # a token's text, lower case, without the quotes of a quoted name ("analyze")
        if i >= len(tokens):
            return ""
        found = _WORD.match(statement, tokens[i][0] + (statement[tokens[i][0]] == '"'))
        return found.group().lower() if found else statement[tokens[i][0]]

    if not tokens or word(0) != "explain":
        raise InvalidInput("sql() could not find the statement EXPLAIN explains")
    i = 1
    if word(i) == "(":  # options: (FORMAT json, ANALYZE, …), no nested parentheses
        close = next((j for j in range(i, len(tokens)) if word(j) == ")"), None)
        if close is None or any(word(j) == "(" for j in range(i + 1, close)):
            raise InvalidInput("sql() could not read the options of this EXPLAIN")
        options, i = {word(j) for j in range(i + 1, close)}, close + 1
    else:
        options = set()
    if {"analyze", "analyse"} & (options | {word(i)}):
        raise InvalidInput("EXPLAIN ANALYZE runs the statement it explains, so the read-only path refuses it; use "
                           "EXPLAIN, or sql(..., write=True)")
    if i >= len(tokens):
        raise InvalidInput("sql() could not find the statement EXPLAIN explains")
    return statement[tokens[i][0]:]


def _group(value: Any, name: str) -> str:
    """A group id a revocation names: any the store may hold, but not '*' (a publish right reads it as any group: a
    revocation of team '*' deleted the wildcard right the host granted)."""
    group = validate.text(value, name, max_chars=200)
    if group == "*":
        raise InvalidInput(f"{name} must not be '*': a publish right reads it as any group")
    return group
