"""Check and normalise every value a public call takes; a bad one raises InvalidInput naming it."""

from __future__ import annotations

import itertools
import math
import os
import re
import unicodedata
import uuid
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from ..errors import InvalidInput
from ..models import PROVENANCE, PROVENANCE_NAMES, SCOPES
from .scan.normalise import small_capitals
from .scan.skeleton import latin_lookalikes

MAX_CONTENT_CHARS = 100_000
MAX_KEY_CHARS = 200
MAX_TAG_CHARS = 100
MAX_TAGS = 64
MAX_ITEMS = 1_000  # a list of labels, refs or choices is read no further than this (its own limit is checked after)
MAX_REFS = 200  # source_refs per memory (a restatement keeps at most this many too)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
# default-ignorable marks and fillers that are not format characters (Cf): they show as nothing
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0"
                       + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))


def text(value: Any, name: str, *, max_chars: int = MAX_CONTENT_CHARS, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if not allow_empty and not visible(value):
        raise InvalidInput(f"{name} must not be empty: it holds only invisible characters")
    if len(value) > max_chars:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {max_chars:,}")
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL character (\\x00), which echo_duck does not store")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInput(f"{name} is not valid Unicode text (lone surrogate at position {e.start})") from None
    return value


# Letters and symbols that print as blank space: the braille blank, the Hangul fillers.
_BLANKS = frozenset("\u2800\u3164\uffa0\u115f\u1160")


def _shows(ch: str) -> bool:
    """Whether a character shows when printed: not a space, a control or format character (U+200B, U+2060), a
    combining mark on its own (U+034F, a lone U+FE0F) or a blank letter (U+2800, U+3164)."""
    return not ch.isspace() and ch not in _BLANKS and unicodedata.category(ch) not in ("Cc", "Cf", "Mn", "Me")


def visible(value: str) -> bool:
    """Whether any character of ``value`` shows when printed."""
    return any(map(_shows, value))


def identifier(value: Any, name: str, *, group: bool = False) -> str:
    """An agent, team or tenant id: the prompt shows it in labels ("[agent bob, team]"), the CLI prints it, and rights
    name it. Plain text on one line: no control, format or unassigned character (a second line forged a host's label),
    no outer spaces ("coder " showed as "coder"), no brackets, Latin letters not mixed with Greek or Cyrillic ones
    ("cоder"); a group id is not "*", which a publish right reads as any group."""
    value = text(value, name, max_chars=200)
    if value != value.strip():
        raise InvalidInput(f"{name} {value!r} begins or ends with a space")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp") or c in _IGNORABLE for c in value) or (
            "[" in value or "]" in value):
        raise InvalidInput(f"{name} {value!r} holds a control, format, invisible or bracket character; ids are plain text")
    _one_alphabet(value, name, "an id")
    if group and value == "*":
        raise InvalidInput(f"{name} must not be '*': a publish right reads it as any group")
    return value


def _one_alphabet(value: str, name: str, what: str) -> None:
    """Refuse a word that mixes Latin letters with Greek or Cyrillic ones ("cоder" with a Cyrillic o); words in
    different alphabets side by side ("notes ухо") are fine."""
    for word in _WORDS.findall(value):
        scripts = {unicodedata.name(c, "").split(" ")[0] for c in word} & {"LATIN", "GREEK", "CYRILLIC"}
        if len(scripts) > 1:
            raise InvalidInput(f"{name} {value!r} mixes {' and '.join(sorted(s.title() for s in scripts))} letters in "
                               f"one word; {what} would read as another one")


_WORDS = re.compile(r"[^\W\d_]+")  # runs of letters


def reason(value: Any, *, optional: bool = False) -> str | None:
    """A caller's reason for a change (kept in the event log, at most 1,000 characters). It may not start with
    "quarantined": a create event's reason says so only when the write scanner held the row (approval_never_given)."""
    if optional and value is None:
        return None
    value = text(value, "reason", max_chars=1000)
    if value.startswith("quarantined"):
        raise InvalidInput("reason may not start with 'quarantined': the event log keeps that word for writes the "
                           "scanner held; say it another way (e.g. 'held: …')")
    return value


def optional_identifier(value: Any, name: str, *, group: bool = False) -> str | None:
    return None if value is None else identifier(value, name, group=group)


def optional_text(value: Any, name: str, *, max_chars: int = MAX_CONTENT_CHARS) -> str | None:
    return None if value is None else text(value, name, max_chars=max_chars)


def choice(value: Any, name: str, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if not isinstance(value, str) or value.lower() not in allowed:
        raise InvalidInput(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value.lower()


def choices(values: Any, name: str, allowed: Iterable[str]) -> list[str] | None:
    """None (no filter), one value, or an iterable of values."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return [choice(v, name, allowed) for v in _bounded(values, name)]


def owner(scope: Any, team_id: Any, tenant_id: Any, *, default_team: str | None,
          default_tenant: str | None) -> tuple[str, str | None, str | None]:
    """(scope, team_id, tenant_id) of a memory or document: team/tenant default to the caller's, a team or
    tenant scope needs one, and the id a scope does not use is dropped."""
    scope = choice(scope, "scope", SCOPES)
    team = optional_identifier(team_id, "team_id", group=True) or (default_team if scope == "team" else None)
    tenant = optional_identifier(tenant_id, "tenant_id", group=True) or (default_tenant if scope == "tenant" else None)
    if scope == "team" and not team:
        raise InvalidInput("scope='team' needs team_id= (or open the store with team_id=)")
    if scope == "tenant" and not tenant:
        raise InvalidInput("scope='tenant' needs tenant_id= (or open the store with tenant_id=)")
    return scope, team if scope == "team" else None, tenant if scope == "tenant" else None


def unit_interval(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"{name} must be a number between 0 and 1, got {value!r}")
    value = real(value, name)
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be between 0 and 1, got {value!r}")
    return value


def finite(value: float) -> bool:
    """Is this int or float a finite float? (math.isfinite raises OverflowError on an int past a float's range.)"""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def amount(value: Any, name: str, *, maximum: float, unit: str) -> float:
    """A finite number from 0 to ``maximum`` (seconds, days) as a float."""
    value = real(value, name)
    if not 0 <= value <= maximum:
        raise InvalidInput(f"{name} must be a number of {unit} from 0 to {maximum:,g}, got {value!r}")
    return value


def real(value: Any, name: str) -> float:
    """An int or float as a float that is a number (not NaN), ints too large for a float refused by name."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"{name} must be a number, got {value!r}")
    try:
        value = float(value)
    except OverflowError:
        raise InvalidInput(f"{name} is too large a number ({len(str(abs(value)))} digits)") from None
    if math.isnan(value):
        raise InvalidInput(f"{name} must be a number, got nan")
    return value


def positive_int(value: Any, name: str, *, maximum: int = 1_000_000) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidInput(f"{name} must be a whole number from 1 to {maximum:,}, got {value!r}")
    return value


def flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be True or False, got {value!r}")
    return value


def provenance(value: Any) -> int:
    """A provenance name (user_stated, consolidated, model_inferred, legacy) or its level 0..3."""
    if isinstance(value, str) and value.lower() in PROVENANCE:
        return PROVENANCE[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool) and value in PROVENANCE_NAMES:
        return value
    raise InvalidInput(f"provenance must be one of {', '.join(PROVENANCE)} (or 0..3); got {value!r}")


def label(value: Any, name: str, *, max_chars: int, strip: bool = True) -> str:
    """A key, tag, entity or source ref: text without control characters (the CLI prints labels, and an ESC in a key
    concealed a held row from its reviewer's terminal)."""
    value = text(value, name, max_chars=max_chars)
    value = value.strip() if strip else value
    if _CONTROL.search(value):
        raise InvalidInput(f"{name} {value!r} holds a control character; labels are one line of plain text")
    return value


def labels(values: Any, name: str) -> list[str]:
    """Tags or entities: an iterable of short non-empty strings (a bare string is refused)."""
    if values is None:
        return []
    if isinstance(values, str):
        raise InvalidInput(f"{name} must be a list of strings, not one string; write {name}=[{values!r}]")
    out = list(dict.fromkeys(label(v, f"each of {name}", max_chars=MAX_TAG_CHARS) for v in _bounded(values, name)))
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"{name} has {len(out)} values; the limit is {MAX_TAGS}")
    return out


def with_tag(tags: Iterable[str], tag: str) -> list[str]:
    """``tags`` and ``tag`` (share()'s consent), refused by name when the memory already holds MAX_TAGS."""
    tags = list(tags)
    if len(tags) >= MAX_TAGS:
        raise InvalidInput(f"the memory has {len(tags)} tags, the most one holds, so {tag!r} cannot be added: remove "
                           "one first (update(id, tags=[...]))")
    return [*tags, tag]


def refs(values: Any, name: str = "source_refs") -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        raise InvalidInput(f"{name} must be a list of strings such as 'message:<id>', not one string")
    out = [label(v, f"each of {name}", max_chars=MAX_KEY_CHARS, strip=False) for v in _bounded(values, name)]
    if len(out) > MAX_REFS:
        raise InvalidInput(f"{name} has {len(out)} values; the limit is {MAX_REFS}")
    return out


def key(value: Any) -> str | None:
    """A key, its ends stripped; a profile section's name as the snapshot's heading reads it (section_name): two
    spellings of one heading must be one key, so the provenance guard sees them ('profile: 基础特征')."""
    if value is None:
        return None
    k = label(value, "key", max_chars=MAX_KEY_CHARS)
    if k.startswith("profile:"):  # a profile section is a heading of the prompt: one spelling per heading
        k = "profile:" + section_name(k[8:])
        if k == "profile:":  # the snapshot showed an empty heading; profile_update refused the same section
            raise InvalidInput("key 'profile:' names no section: write 'profile:<section>' (e.g. 'profile:preferences')")
        _one_alphabet(k[8:], "profile section", "a profile section")
    if len(k) > MAX_KEY_CHARS:  # NFKC may lengthen a section's name ("ﬃ" is "ffi")
        raise InvalidInput(f"key is {len(k):,} characters once its section name is folded (NFKC); the limit is "
                           f"{MAX_KEY_CHARS:,}")
    return k


def section_name(name: str) -> str:
    """A profile section's name as its heading reads: NFKC (full-width and no-break spaces folded), no format or
    other invisible characters, look-alike letters inside a Latin word folded, one space between words."""
    name = unicodedata.normalize("NFKC", name)
    name = "".join(c for c in name if unicodedata.category(c) != "Cf" and c not in _IGNORABLE)
    return " ".join(_WORDS.sub(_unmask, name).split())  # _IGNORABLE holds the variation selectors


def _unmask(word: re.Match) -> str:
    """A Latin word with look-alike letters of another script or small capitals in it ("prefereոces", "ᴄommunication")
    as the Latin it imitates; a word without an ASCII letter, or whose other letters are Latin ones (Turkish "kır"),
    is left as it is."""
    text = word.group()
    odd = [c for c in text if not c.isascii()]
    if not odd or len(odd) == len(text):
        return text
    table = latin_lookalikes()
    small = small_capitals(text)
    if all(c in table and not unicodedata.name(c, "").startswith("LATIN") for c in small if not c.isascii()):
        return "".join(table.get(c, c) for c in small)
    return text


def memory_id(value: Any, name: str = "id") -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    if hasattr(value, "id") and not isinstance(value, str):  # a Memory or Hit
        value = value.id
    try:
        return uuid.UUID(str(value))
    except (ValueError, TypeError):
        raise InvalidInput(f"{name} must be a memory id (a uuid), got {value!r}") from None


_ID_PREFIX = re.compile(r"[0-9a-f]{4}[0-9a-f-]{0,32}")


def id_prefix(value: Any) -> str | None:
    """The start of a memory id (at least 4 hex digits, as tables print 8), lower-cased; None otherwise."""
    if isinstance(value, str) and _ID_PREFIX.fullmatch(value.lower()) and not looks_like_uuid(value):
        return value.lower()
    return None


def looks_like_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
        return True
    except (ValueError, TypeError):
        return False


def timestamp(value: Any, name: str) -> datetime | None:
    """A datetime/date/ISO string, returned as naive UTC (the store's convention)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{name} must be an ISO date/time such as 2026-11-29T10:00, got {value!r}") from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise InvalidInput(f"{name} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is not None:
        try:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:30+05:00 is before year 1 in UTC
            raise InvalidInput(f"{name} is out of range in UTC (years 1 to 9999), got {value.isoformat()}") from None
    return value


def path(value: Any, name: str = "path") -> Path:
    """One file path (str or os.PathLike), not empty, without NUL (the OS refuses it with a bare ValueError)."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise InvalidInput(f"{name} must be a path (str or pathlib.Path), got {type(value).__name__}")
    text_ = os.fspath(value)
    if not isinstance(text_, str) or not text_.strip():
        raise InvalidInput(f"{name} must be a non-empty path, got {value!r}")
    if "\x00" in text_:
        raise InvalidInput(f"{name} contains a NUL character (\\x00), which no file name may hold")
    return Path(text_)


def callback(value: Any, name: str = "progress") -> Any:
    """None or a callable: checked before a long run starts (one that fails at its first call left the run half done)."""
    if value is not None and not callable(value):
        raise InvalidInput(f"{name} must be a function (or None), got {type(value).__name__}")
    return value


def paths(values: Any, name: str) -> list[str]:
    """A list of paths (str or os.PathLike) as strings; one bare string was read as a path per character."""
    if isinstance(values, (str, bytes)) or hasattr(values, "__fspath__"):
        raise InvalidInput(f"{name} must be a list of paths, got one {type(values).__name__}: wrap it in a list")
    return [str(p) for p in labels(list(map(str, _bounded(values, name))), name)]


def _iterable(values: Any, name: str) -> Iterable[Any]:
    if isinstance(values, (bytes, dict)) or not hasattr(values, "__iter__"):
        raise InvalidInput(f"{name} must be a list, got {type(values).__name__}")
    return values


def _bounded(values: Any, name: str) -> list[Any]:
    """A list argument of labels, refs or choices as a list, read no further than MAX_ITEMS + 1 (a generator may never
    end; 100,000 tags were de-duplicated in quadratic time before their limit was checked)."""
    items = list(itertools.islice(_iterable(values, name), MAX_ITEMS + 1))
    if len(items) > MAX_ITEMS:
        raise InvalidInput(f"{name} has more than {MAX_ITEMS:,} values; the limit is {MAX_TAGS} tags or entities, "
                           f"{MAX_REFS} source refs")
    return items
