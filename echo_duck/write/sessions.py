"""Sessions and messages (SPEC M4): the raw conversation that episodes and consolidation read.

A session id is handed out without touching the file; the session row is written together with its
first message, so the store never holds empty sessions. Session ids are per agent: two agents' sessions of
one id are two conversations. Messages are stored verbatim (they are the source of truth for what was said);
the write scanner runs when facts are extracted from them, and on a title given with a first message.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Callable

from ..errors import AmbiguousMatch, InvalidInput, MemoryNotFound, RejectedWrite
from ..models import ROLES, Message, Session, SessionMatch
from ..storage.db import Db
from . import validate
from .scan import scan_many
from .writer import reads_as_text

MAX_MESSAGE_CHARS = 1_000_000
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


class Sessions:
    def __init__(self, db: Db, clock: Callable[[], datetime], agent_id: str):
        self.db = db
        self.clock = clock
        self.agent_id = agent_id

    def start(self) -> str:
        """A fresh session id; nothing is written until its first message."""
        return uuid.uuid4().hex

    def add_message(self, session_id: str, role: str, content: str, *, title: str | None = None) -> Message:
        session_id = _session_id(session_id)
        role = validate.choice(role, "role", ROLES)
        content = validate.text(content, "content", max_chars=MAX_MESSAGE_CHARS, allow_empty=True)
        title = validate.optional_text(title, "title", max_chars=200)
        # Only a first message's title is stored, so only then is it scanned (a model pass, outside the write lock).
        # A session that appears or goes between this read and the write is left to the write: it then keeps its
        # title, or takes the first user message's as its title, never an unread one.
        screened = None
        if title and title.strip():
            with self.db.reading():
                starts = self.db.dict("session_by_id", id=session_id, agent_id=self.agent_id) is None
            screened = _screened_title(title) if starts else None
        with self.db.transaction("add_message"):
            now = self.clock()
            # Session ids are per agent: another agent's session of the same id is another conversation.
            if self.db.dict("session_by_id", id=session_id, agent_id=self.agent_id) is None:
                self.db.run("insert_session", id=session_id, agent_id=self.agent_id, title=screened, now=now)
            else:
                self.db.run("touch_session", agent_id=self.agent_id, session_id=session_id, now=now)
            seq = self.db.scalar("next_message_seq", agent_id=self.agent_id, session_id=session_id)
            message_id = uuid.uuid4()
            self.db.run("insert_message", id=message_id, agent_id=self.agent_id, session_id=session_id, seq=seq,
                        role=role, content=content, now=now)
            if role == "user" and content.strip():  # seed 004: the title is the first user message's first 40 characters
                self.db.run("title_if_missing", agent_id=self.agent_id, session_id=session_id,
                            title=auto_title(content))
            return Message(str(message_id), session_id, seq, role, content, now)

    def resolve(self, id_or_suffix: str) -> str:
        """A session id from its full id or a unique suffix (at least 4 characters)."""
        text = validate.text(id_or_suffix, "session id", max_chars=200).strip()
        with self.db.reading():
            if self.db.dict("session_by_id", id=text, agent_id=self.agent_id) is not None:
                return text
            if len(text) < 4:
                raise InvalidInput(f"session id suffix {text!r} is too short; give at least 4 characters")
            ids = [r[0] for r in self.db.run("sessions_by_suffix", agent_id=self.agent_id, suffix=text).fetchall()]
        if not ids:
            raise MemoryNotFound(f"no session with id or id suffix {text!r}")
        if len(ids) > 1:
            raise AmbiguousMatch(f"session suffix {text!r} matches several sessions ({', '.join(ids)}); give more characters")
        return ids[0]

    def get(self, id_or_suffix: str) -> Session:
        session_id = self.resolve(id_or_suffix)
        with self.db.reading():
            return Session.from_row(self.db.dict("session_with_count", id=session_id, agent_id=self.agent_id))

    def messages(self, id_or_suffix: str) -> list[Message]:
        session_id = self.resolve(id_or_suffix)
        with self.db.reading():
            return [Message.from_row(r)
                    for r in self.db.dicts("session_messages", agent_id=self.agent_id, session_id=session_id)]

    def list(self, limit: int = 50) -> list[Session]:
        limit = validate.positive_int(limit, "limit")
        with self.db.reading():
            return [Session.from_row(r) for r in self.db.dicts("list_sessions", agent_id=self.agent_id, limit=limit)]

    def search(self, text: str, limit: int = 20) -> list[SessionMatch]:
        text = validate.text(text, "text", max_chars=1000)
        limit = validate.positive_int(limit, "limit")
        with self.db.reading():
            rows = self.db.dicts("search_sessions", agent_id=self.agent_id, text=text, limit=limit)
        return [SessionMatch.from_row(r) for r in rows]

    def end(self, id_or_suffix: str) -> Session:
        session_id = self.resolve(id_or_suffix)
        with self.db.transaction("end_session"):
            self.db.run("end_session", agent_id=self.agent_id, session_id=session_id, now=self.clock())
        return self.get(session_id)

    def clean_empty(self) -> int:
        """Remove session rows that have no messages (left by older writers); returns how many."""
        with self.db.transaction("clean_empty_sessions"):
            return self.db.run("clean_empty_sessions").fetchone()[0]


def auto_title(text: str) -> str:
    """A session title from a message: its first 40 characters on one line (seed 004)."""
    line = " ".join(text.split())
    return line if len(line) <= 40 else line[:40].rstrip() + "…"


def retitle_before_delete(db: Db, message_ids: list[str]) -> list[tuple[str, str]]:
    """The sessions (agent, id) whose title was made from one of these messages (before they are deleted)."""
    rows = db.dicts("titles_of_messages", ids=message_ids)
    return sorted({(r["agent_id"], r["session_id"]) for r in rows if r["title"] == auto_title(r["content"])})


def retitle_after_delete(db: Db, sessions: list[tuple[str, str]]) -> None:
    """Derived text follows its source: those sessions take their title from the first user message left."""
    for agent_id, session_id in sessions:
        first = db.scalar("first_user_message", agent_id=agent_id, session_id=session_id)
        db.run("set_session_title", agent_id=agent_id, session_id=session_id,
               title=auto_title(first) if first else None)


def _screened_title(title: str | None) -> str | None:
    """A given title is text the session list shows and an episode's summary leads with: the scanner reads it as
    it reads a key, as content when it reads like a sentence. A block refuses the message (nothing is stored); when
    the scanner is unsure the title is left out, and the first user message names the session as it does when no
    title is given."""
    if not title or not title.strip():
        return title
    (finding,) = scan_many([title], labels=[not reads_as_text(title)])
    if finding is not None and finding.blocked:
        raise RejectedWrite(finding.reason, finding.detail, "title")
    return None if finding is not None else title


def _session_id(value: str) -> str:
    if not isinstance(value, str) or not _SESSION_ID.match(value):
        raise InvalidInput(f"session id must be 1-200 letters, digits or _.:- characters, got {value!r}")
    return value
