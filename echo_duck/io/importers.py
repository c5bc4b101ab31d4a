"""Import memories from files other agents wrote, and from echo_duck's own exports (SPEC I5).

Every record goes through the one write path (``Writer``: validate → scan → provenance guard →
versioned upsert + event) as caller path ``"import"``, so refused content lands in ``blocked_writes``
with path ``import``. A file is parsed completely before anything is written: a malformed file raises
``InvalidInput`` naming the file and line and stores nothing. A bad record is skipped and reported,
never sinking the rest. Re-importing a file is idempotent (identical facts count as duplicates).

Accepted shapes (``format=None`` detects the format from the file name, then from the content):

- ``echo-user`` (user_memory.json) / ``echo-env`` (env_memory.json): echo-agent MemoryEntry objects;
  the file decides the type (user / environment).
- ``ethan-facts`` (facts.json): type from a ``type`` field, else user; ``category`` becomes a tag,
  ``source`` a ``source:<value>`` tag, ``session_id`` the source session.
- ``ethan-procedures`` (procedures.json): ``rule`` (or content) → a procedure; ``context`` → a tag.
- The JSON of these: a list of objects (or strings: content only); an object holding that list under
  memories, entries, facts, procedures, rules, items or data; one object; or an object mapping key →
  object / key → content. Content is the first of content, text, value, fact, rule, entry, memory;
  key, confidence, importance, tags (list or "a, b"), keywords, pinned, scope, sensitivity, entities,
  source_refs, source_session pass through (except in a trusted restore, a ref naming one of the store's messages,
  episodes, summaries or memories is kept as ``claimed-<ref>``: a purge follows those, and the file's claim must not
  take the user's message with it). The first of observed_at, created_at, timestamp,
  updated_at (ISO text, or Unix seconds; milliseconds above 1e12) becomes ``observed_at``: echo_duck
  stamps created_at itself. An ``id`` becomes the source ref ``import:<file>#<id>``. Skipped with a
  reason: ``superseded_by`` set, ``status`` not active, ``active: false``, tier ``working``; tier
  ``archival`` is stored as semantic (the decay job archives again what deserves it).
- ``memory-md`` (MEMORY.md): each list item (``-``, ``*``, ``+``, ``1.``; indented lines continue it)
  is a memory tagged with the slugs of its headings (a lone H1 title excepted), typed by the nearest
  heading naming a type: User / Preferences / Profile / 用户 / 偏好 / 画像 → user; Rules / Procedures /
  Guidelines / 规则 / 约定 → procedure; Self / 自我 → self; else (Environment, Project, Tools, 环境 …)
  environment. ``- **label**: text`` or ``- `label`: text`` sets key ``label``. Prose paragraphs are
  skipped and reported; fenced code is ignored.
- ``ethan-profile`` (user_profile.md): each ``##`` section (``#`` if none) becomes one user memory
  keyed ``profile:<section>`` holding the section's text; empty sections are skipped.
- ``jsonl`` (.jsonl / .ndjson) and ``parquet``: echo_duck records as ``echo_duck.io.exporters`` writes
  them (the fields of ``remember``); id, version, counters and episode_id are not carried over, nor agent_id
  but by a trusted restore.

Rows get ``provenance`` (default ``legacy``); ``"keep"`` keeps each record's own (legacy where absent),
e.g. to restore an export: a file's claim like its scope and pins, so it needs ``trusted=True`` (an admin).
The write path sets access_count, last_accessed, created_at and versions.
"""

from __future__ import annotations


import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import AmbiguousMatch, InvalidInput, PermissionDenied, ProvenanceConflict, RejectedWrite
from ..write import validate
from ..write.spec import DEFAULT_IMPORTANCE
from ..write.writer import Caller, NewMemory, prepare
from .formats import FORMATS
from .import_files import PARSERS, Record, detect_format
from .import_trust import ACCESS_COUNT_CEILING, dumps_usage
from .store_files import refuse_store_file

_TRUSTED_ONLY = ("scope", "team_id", "tenant_id", "pinned")  # honoured only with trusted=True (an admin)
# Source refs naming the store's own messages, episodes, summaries and memories: a purge follows them (the record "came
# from" the user's message, which went with it). From an untrusted file they are its claim, kept as "claimed-<kind>:".
_FOLLOWED_REFS = ("message", "episode", "summary", "memory")


def _claimed(ref: str) -> str:
    kind, colon, _ = ref.partition(":")
    return f"claimed-{ref}" if colon and kind.strip().lower() in _FOLLOWED_REFS else ref


# InvalidInput here is what the store refused that parsing let through (a constraint): that record is reported,
# never sinking the rest of the file after earlier batches were committed
_WRITE_ERRORS = (ProvenanceConflict, AmbiguousMatch, PermissionDenied, RejectedWrite, InvalidInput)
_ERROR_REASONS = {ProvenanceConflict: "provenance_conflict", AmbiguousMatch: "ambiguous",
                  PermissionDenied: "permission_denied", RejectedWrite: "rejected", InvalidInput: "invalid"}


@dataclass(frozen=True)
class Issue:
    """One record that was not stored: where in the file, a short reason, and the detail."""

    where: str   # "item 3", "line 12", "key 'editor'"
    reason: str  # duplicate | rejected | invalid | superseded | inactive | empty | prose | provenance_conflict | …
    detail: str  # for "rejected": "<scanner reason> in <field>: <what matched>"


@dataclass(frozen=True)
class ImportReport:
    """What an import did. ``read == stored + len(skipped) + len(errors)``."""

    path: str
    format: str
    read: int
    stored: int
    skipped: tuple[Issue, ...] = ()
    errors: tuple[Issue, ...] = ()   # refused by the write path for a reason a person should look at
    dry_run: bool = False
    ids: tuple[str, ...] = field(default=(), repr=False)
    quarantined: tuple[str, ...] = ()  # ids of stored memories held for review (echo-duck approve|reject)

    @property
    def by_reason(self) -> dict[str, int]:
        return dict(Counter(i.reason for i in self.skipped + self.errors))

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "read": self.read, "stored": self.stored,
                "dry_run": self.dry_run, "by_reason": self.by_reason, "quarantined": list(self.quarantined),
                "skipped": [i.__dict__ for i in self.skipped], "errors": [i.__dict__ for i in self.errors]}




def import_file(mem: Any, path: str | Path, *, format: str | None = None, provenance: str | int = "legacy",
                dry_run: bool = False, batch_size: int = 500, trusted: bool = False) -> ImportReport:
    """Import one file into ``mem`` (an open EchoDuck); see the module docstring for the formats.

    A file is untrusted text: its records are written private, unpinned and semantic, whatever ``scope``,
    ``team_id``, ``tenant_id``, ``pinned`` or ``tier`` they carry (echo-agent's HISTORY.md is a history: episodic),
    and no more important than a write naming none (an ``importance`` above 0.5 is read as 0.5: it would rank the
    file's line above the user's fact in recall).
    ``trusted=True`` (an admin handle only) keeps them, e.g. to restore an export made by an admin, and skips the
    contradiction check every other import runs on what it stored (a query per record); it also keeps a record's
    ``by_host`` (what the host wrote itself, ``memories.by_host``) and ``agent_id`` (each record comes back under its
    owner; a record counts as stored where its owner holds it), which an untrusted import never does: a restored
    rule stays the host's to change, and a member's stays the member's. ``provenance="keep"`` (each
    record's own provenance, a file's claim like the others: ``"source": "user"`` would otherwise outrank what the
    user said) needs it too.

    An agent handle may not import the store's own files (the store file, its .wal, anything in its Parquet
    archive folder, also through a symlink or a hard link: ``store_files.py``): the archive holds every
    agent's archived rows; nor a file inside the store's ``protected_paths``, nor one with a second hard link
    (``storage/agent_files.py``, as for ``kb_add``). An admin handle may import from the archive folder (the
    trusted host; its ``sql`` reads the archive anyway), never the store file or its .wal (PermissionDenied:
    reading the open file through a second descriptor drops this process's lock on it)."""
    path = validate.path(path)
    rules = mem._agent_files() if hasattr(mem, "_agent_files") else None
    if rules is not None:  # before the path is looked up: a refused path answers alike, there or not
        rules.check_read(path, "import")
    if path.is_dir():  # a folder would be read as a dataset, through whatever links it holds
        raise InvalidInput(f"{path} is a folder; import_file reads one file")
    # the archive's files are the host's to read (its sql reads them anyway); the store file never: reading it
    # through a second descriptor drops this process's lock on it (store_files.py)
    refuse_store_file(mem, path, "import", archive=not getattr(mem, "is_admin", False))
    if validate.flag(trusted, "trusted") and not getattr(mem, "is_admin", False):
        raise PermissionDenied("trusted=True keeps scope and pinned from the file: it needs an admin handle "
                               "(echo_duck.open(path, admin=True); CLI: import --trusted --admin)")
    fmt = detect_format(path) if format is None else validate.choice(format, "format", FORMATS)
    keep = isinstance(provenance, str) and provenance.lower() == "keep"
    if keep and not trusted:
        raise PermissionDenied("provenance='keep' takes each record's provenance from the file, a claim the file "
                               "makes like its scope and pins: it needs trusted=True on an admin handle "
                               "(CLI: import --provenance keep --trusted --admin); or name the provenance to give")
    level = None if keep else validate.provenance(provenance)
    dry_run = validate.flag(dry_run, "dry_run")
    batch_size = validate.positive_int(batch_size, "batch_size", maximum=100_000)
    records = PARSERS[fmt](path)
    for _, fields, _ in records:
        if fields is not None:
            own = fields.pop("provenance", None)
            fields["provenance"] = (own if own is not None else "legacy") if keep else level
            fields["_by_host"] = bool(fields.get("_by_host")) and trusted
            if not trusted:
                fields.pop("_agent_id", None)
                for name in _TRUSTED_ONLY:
                    fields.pop(name, None)
                weight = fields.get("importance")  # ranks a row above the user's facts (recall's decay factor)
                if isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > DEFAULT_IMPORTANCE:
                    fields["importance"] = DEFAULT_IMPORTANCE
                if fmt != "echo-history":  # an episode states no fact, so no check meets it: not the file's to say
                    fields.pop("tier", None)
                fields["source_refs"] = [_claimed(ref) if isinstance(ref, str) else ref  # the writer refuses the rest
                                         for ref in fields.get("source_refs") or ()]
    # The writer records caller.path in blocked_writes and caller.who in events: say it was this import.
    caller = mem.caller.acting_as(mem.caller.actor or f"import:{path.name}", "import")
    return _write(mem, caller, path, fmt, records, dry_run, batch_size, check=not trusted)


# -- writing -----------------------------------------------------------------------------------------

def _write(mem: Any, caller: Caller, path: Path, fmt: str, records: list[Record], dry_run: bool,
           batch_size: int, check: bool) -> ImportReport:
    skipped: list[tuple[int, Issue]] = []
    errors: list[Issue] = []
    prepared: list[tuple[int, str, NewMemory]] = []
    usages: dict[str, Any] = {}  # where -> (access_count, last_accessed), applied once stored
    hosts: set[str] = set()  # records a trusted import keeps as the host's own words (by_host)
    writers: dict[str, Caller] = {}  # who a record is written as, when not ``caller`` (a trusted restore)
    versions: set[str] = set()  # older versions kept for their chain: stored once, whatever their status now
    now = mem.writer.clock()
    for i, (where, fields, why) in enumerate(records):
        try:
            if why is not None:
                skipped.append((i, Issue(where, *why)))
                continue
            usage = fields.pop("_usage", None)
            if fields.pop("_version", False):
                versions.add(where)
            if fields.pop("_by_host", False):
                hosts.add(where)
            owner = fields.pop("_agent_id", None)
            if owner is not None or where in hosts:  # a trusted restore: each record under its owner, as written
                writers[where] = _writer(caller, owner, where in hosts)
            spec = prepare(caller, fields.pop("content"), **fields)
            if spec.observed_at is not None and spec.observed_at > now:  # a file's future date: as of now
                spec = replace(spec, observed_at=now)
            prepared.append((i, where, spec))
            if usage is not None:
                usages[where] = usage
        except InvalidInput as e:
            skipped.append((i, Issue(where, "invalid", str(e))))
    candidates: list[tuple[int, str, NewMemory]] = []
    held: dict[int, Any] = {}  # position in candidates -> the scanner's finding, for writes it quarantines
    for start in range(0, len(prepared), batch_size):  # one model pass per batch; blocks are logged (not in a dry run)
        part = prepared[start:start + batch_size]
        findings: dict[int, Any] = {}
        for who in dict.fromkeys(writers.get(where, caller) for _, where, _ in part):  # scanned as written
            at = [k for k, (_, where, _) in enumerate(part) if writers.get(where, caller) == who]
            found = _screen(mem, who, [part[k][2] for k in at], log=not dry_run)
            findings.update({at[j]: finding for j, finding in found.items()})
        for k, (i, where, spec) in enumerate(part):
            finding = findings.get(k)
            if finding is not None and finding.blocked:
                skipped.append((i, Issue(where, "rejected", f"{finding.reason} in {finding.detail}")))
                continue
            try:
                mem.writer.check_permission(writers.get(where, caller), spec)
            except PermissionDenied as e:
                errors.append(Issue(where, "permission_denied", str(e)))
                continue
            if finding is not None:
                held[id(spec)] = finding
            candidates.append((i, where, spec))
    owned = bool(writers)  # a trusted restore: a record is stored where its owner holds it
    stored, seen, good = _stored(mem, [spec for _, _, spec in candidates], owned=owned), set(), []
    history = _stored(mem, [spec for _, w, spec in candidates if w in versions], statuses=("superseded",), owned=owned)
    for i, where, spec in candidates:
        ident = _identity(spec) if not owned else (writers.get(where, caller).agent_id, *_identity(spec))
        # the host's record is stored only as the host's row (an agent's copy of its words is not it)
        ident = (*ident, True) if where in hosts else ident
        if ident in seen or ident in stored or (where in versions and ident in history):
            why = "already stored" if ident in stored or ident in history else "the same memory appears earlier in the file"
            skipped.append((i, Issue(where, "duplicate", why)))
        else:
            seen.add(ident)
            good.append((where, spec))
    ids: list[str] = []
    quarantined: list[str] = []
    try:
        _write_batches(mem, caller, good, held, usages, batch_size, dry_run, ids, quarantined, errors, writers,
                       "apart" if check else None)
    finally:  # what was committed meets the check, even when a later batch failed
        if check and ids:
            # Untrusted text meets what is stored as any write does: a contradiction is recorded and settled by
            # provenance (a file's claim never silently stands beside the user's); the file's lines not against
            # each other.
            held_ids = set(quarantined)
            mem.checker.check(caller, [i for i in ids if i not in held_ids], apart=True)
    return ImportReport(str(path), fmt, len(records), len(good) if dry_run else len(ids),
                        tuple(issue for _, issue in sorted(skipped, key=lambda x: x[0])), tuple(errors), dry_run, tuple(ids),
                        tuple(quarantined))


def _write_batches(mem: Any, caller: Caller, good: list[tuple[str, NewMemory]], held: dict[int, Any],
                   usages: dict[str, Any], batch_size: int, dry_run: bool, ids: list[str], quarantined: list[str],
                   errors: list[Issue], writers: dict[str, Caller] | None = None, owe: str | None = None) -> None:
    """One transaction per batch; a refusal inside it falls back to one record at a time. Appends to ``ids``,
    ``quarantined`` and ``errors`` as it goes (the caller checks what was committed, whatever happens). A run of
    records ``writers`` names is written as that caller (a trusted restore: the owner, on the "restore" path for the
    host's words), in file order with the rest."""
    runs: list[tuple[Caller, list]] = []
    for where, spec in [] if dry_run else good:
        who = (writers or {}).get(where, caller)
        if not runs or runs[-1][0] != who or len(runs[-1][1]) == batch_size:
            runs.append((who, []))
        runs[-1][1].append((where, spec))
    for who, batch in runs:
        written: list[tuple[str, Any]] = []
        screened = {k: held[id(spec)] for k, (_, spec) in enumerate(batch) if id(spec) in held}
        try:  # one transaction per batch; a refusal inside it falls back to one record at a time
            stored_batch = mem.writer.remember_many(who, [spec for _, spec in batch], screened=screened, atomic=True,
                                                    owe=owe)
            written = list(zip([w for w, _ in batch], stored_batch))
            quarantined += [m.id for m in stored_batch.quarantined]
        except _WRITE_ERRORS:
            for k, (where, spec) in enumerate(batch):
                try:
                    one = mem.writer.remember_many(who, [spec], screened={0: screened[k]} if k in screened else {},
                                                   atomic=True, owe=owe)
                    written.append((where, one[0]))
                    quarantined += [m.id for m in one.quarantined]
                except _WRITE_ERRORS as e:
                    errors.append(Issue(where, next(r for t, r in _ERROR_REASONS.items() if isinstance(e, t)), str(e)))
        ids += [m.id for _, m in written]
        _apply_usage(mem, who, [(m.id, usages[w]) for w, m in written if w in usages])


def _apply_usage(mem: Any, caller: Caller, usage: list[tuple[str, Any]]) -> None:
    """The access counts (and last access, no later than now) the source recorded, with a 'reinforce' event
    each. A count was checked when the file was parsed; the stored total stays at most ACCESS_COUNT_CEILING (a
    record folded into a memory that already holds many accesses adds only what fits)."""
    if not usage:
        return
    with mem.db.transaction("importing usage"):
        now = mem.writer.clock()
        for memory_id, (count, last) in usage:
            last = min(last, now) if last is not None else None  # a future last access would never decay
            before = mem.db.dict("usage_of", id=memory_id)
            count = max(0, min(count, ACCESS_COUNT_CEILING - before["access_count"]))
            mem.db.run("apply_import_usage", id=memory_id, count=count, last=last)
            mem.db.run("log_partial_event", now=now, actor=caller.who, action="reinforce",
                       memory_id=memory_id, reason=f"imported usage: {count} accesses",
                       before=json.dumps({k: (v.isoformat(sep=" ") if v else v) for k, v in before.items()}),
                       after=dumps_usage((before["access_count"] + count, last or before["last_accessed"])))


def _screen(mem: Any, caller: Caller, specs: list[NewMemory], *, log: bool) -> dict[int, Any]:
    """The writer's scanner over a batch, as the write will meet it: {position: Finding}; blocks are logged unless
    this is a dry run."""
    return mem.writer.screen(caller, specs, atomic=False, log=log)


def _writer(caller: Caller, owner: str | None, by_host: bool) -> Caller:
    """Who a trusted restore writes a record as: its owner (``owner``, the file's agent_id; an admin handle keeps its
    rights), on the "restore" path when the file marks it the host's (guards.host_writes)."""
    if owner is not None and owner != caller.agent_id:
        caller = replace(caller, agent_id=validate.identifier(owner, "agent_id"))
    return caller.acting_as(caller.actor, "restore") if by_host else caller


def _identity(spec: NewMemory) -> tuple:
    """Two records are the same memory: same scope and content, and for a keyed fact same key and type."""
    return spec.scope, spec.key, spec.type if spec.key else None, spec.content


def _stored(mem: Any, specs: list[NewMemory], statuses: tuple[str, ...] = ("active", "quarantined"),
            owned: bool = False) -> set[tuple]:
    """Identities of the live memories visible to the caller whose content equals one of ``specs`` (``owned``: of
    every memory, each identity led by its agent id: a trusted restore, admin only); a row the host wrote (by_host)
    also as its identity with True after it."""
    contents, found = sorted({s.content for s in specs}), set()
    for start in range(0, len(contents), 1000):
        matching = {"contents": contents[start:start + 1000], "statuses": list(statuses)}
        with mem.db.reading():
            rows = mem.db.dicts("import_stored_any_owner", **matching) if owned else \
                mem.db.dicts("import_stored", agent=mem.caller.agent_id, session=mem.caller.session_id, **matching)
        for r in rows:
            ident = (r["scope"], r["key"], r["type"] if r["key"] else None, r["content"])
            ident = (r["agent_id"], *ident) if owned else ident
            found |= {ident, (*ident, True)} if r["by_host"] else {ident}
    return found

