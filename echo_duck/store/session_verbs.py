"""The session verbs of the facade: raw conversations (messages) and their consolidation at the end.

A mixin of ``EchoDuck`` (facade.py); write/sessions.py stores the messages, lifecycle/consolidate.py
turns a finished session into an episode and facts.
"""

from __future__ import annotations

from ..models import Message, Session, SessionMatch
from ..write import validate


class SessionVerbs:
    """start_session, add_message, sessions, session, messages, search_sessions, end_session."""

    def start_session(self) -> str:
        return self.session_log.start()

    def add_message(self, session_id: str, role: str, content: str, *, title: str | None = None) -> Message:
        """Append a message (stored verbatim) to this agent's session ``session_id``, which its first message
        creates; another agent's session of the same id is another conversation. ``title`` (by default the first
        user message names the session) is read only with the message that starts the session, and then scanned as a
        key is: ``RejectedWrite`` when the scanner blocks it, left out when it is unsure; a later message's title is
        ignored."""
        return self.session_log.add_message(session_id, role, content, title=title)

    def sessions(self, limit: int = 50) -> list[Session]:
        return self.session_log.list(limit)

    def session(self, id_or_suffix: str) -> Session:
        return self.session_log.get(id_or_suffix)

    def messages(self, id_or_suffix: str) -> list[Message]:
        return self.session_log.messages(id_or_suffix)

    def search_sessions(self, text: str, limit: int = 20) -> list[SessionMatch]:
        return self.session_log.search(text, limit)

    def end_session(self, id_or_suffix: str, *, consolidate: bool = True) -> Session:
        """Close a session; its consolidation is queued (run by the worker or run_jobs()). The working
        memory is handed to that consolidation (in this process: it is never persisted) and emptied."""
        session = self.session_log.end(id_or_suffix)
        if validate.flag(consolidate, "consolidate") and not self.read_only:
            self.consolidator.hand_over(session.id, [(i.role, i.content) for i in self.working.drain()])
            self.jobs_queue.request(session.id)
        return session
