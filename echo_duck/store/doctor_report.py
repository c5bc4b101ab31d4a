"""What `echo-duck doctor` reports: one ``Check`` per thing it looked at, and the ``DoctorReport`` of them all
(rendered for a terminal or as JSON). The checks themselves are in doctor.py (install) and doctor_store.py (a store)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": len(self.problems), "checks": [c.to_dict() for c in self.checks]}

    def render(self) -> str:
        width = max(len(c.name) for c in self.checks)
        lines = []
        for c in self.checks:
            lines.append(f"{c.status.upper():<4}  {c.name.ljust(width)}  {c.detail}")
            if c.fix:
                lines.append(f"{'':<4}  {''.ljust(width)}  fix: {c.fix}")
        n = len(self.problems)
        lines.append("")
        lines.append("everything is in order" if n == 0 else f"{n} problem{'s' if n > 1 else ''} found")
        return "\n".join(lines)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
