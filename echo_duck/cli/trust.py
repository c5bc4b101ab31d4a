"""CLI commands for administration: grant, revoke, rights (all need --admin)."""

from __future__ import annotations

import click

from . import output
from .common import common, emit, open_or_fail


@click.command()
@click.argument("agent_id")
@click.option("--team", help="Make AGENT_ID a member of this team.")
@click.option("--tenant", help="Make AGENT_ID a member of this tenant.")
@click.option("--publish", is_flag=True, help="Also let it write memories in that team or tenant.")
@click.option("--right", "rights", multiple=True,
              help="A right to grant: publish:public, publish:team:<id>, publish:tenant:<id> (repeatable).")
@common
def grant(agent_id, team, tenant, publish, rights, db, agent, lock_timeout, as_json):
    """Grant AGENT_ID a membership (it reads that group's memories) and/or publishing rights. Needs --admin.

    Example:  echo-duck grant coder --team red --publish --admin
    """
    if not (team or tenant or rights):
        raise click.UsageError("give --team, --tenant or --right")
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        if team or tenant:
            mem.grant(team=team, tenant=tenant, agent_id=agent_id, publish=publish)
        for right in rights:
            mem.grant_right(agent_id, right)
        current = mem.rights(agent_id)
    emit(current, as_json, _render(current))


@click.command()
@click.argument("agent_id")
@click.option("--team", help="Take this team membership (and its publish right) away.")
@click.option("--tenant", help="Take this tenant membership (and its publish right) away.")
@click.option("--right", "rights", multiple=True, help="A right to take away (repeatable).")
@common
def revoke(agent_id, team, tenant, rights, db, agent, lock_timeout, as_json):
    """Revoke a membership or a right of AGENT_ID; its reads change at once. Needs --admin.

    Example:  echo-duck revoke coder --team red --admin
    """
    if not (team or tenant or rights):
        raise click.UsageError("give --team, --tenant or --right")
    with open_or_fail(db, agent, lock_timeout, embedder="none") as mem:
        if team or tenant:
            mem.revoke(team=team, tenant=tenant, agent_id=agent_id)
        for right in rights:
            mem.revoke_right(agent_id, right)
        current = mem.rights(agent_id)
    emit(current, as_json, _render(current))


@click.command()
@click.argument("agent_id", required=False)
@common
def rights(agent_id, db, agent, lock_timeout, as_json):
    """List current memberships and rights (of AGENT_ID, or of every agent). Needs --admin.

    Example:  echo-duck rights --admin
    """
    with open_or_fail(db, agent, lock_timeout, read_only=True, embedder="none") as mem:
        current = mem.rights(agent_id)
    emit(current, as_json, _render(current))


def _render(current: dict) -> str:
    members = output.table(current["memberships"], ("agent_id", "kind", "group_id", "granted_at"))
    granted = output.table(current["rights"], ("agent_id", "right", "granted_at", "granted_by"))
    return f"memberships:\n{members or '(none)'}\n\nrights:\n{granted or '(none)'}"


TRUST_COMMANDS = (grant, revoke, rights)
