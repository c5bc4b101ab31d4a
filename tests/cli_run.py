"""Run the `echo-duck` CLI in this process, as the console script would, for tests.

The console script is ``echo_duck.cli.main:cli`` itself, so CliRunner runs the same code a shell does,
without a child process's interpreter start, imports and model load (1-3 s each). The result looks like
subprocess.CompletedProcess (returncode, stdout, stderr), with an uncaught exception's traceback on
stderr and exit status 1, as Python would print it. The few tests that need a real child process (the
README's shell block, kills at a chosen step, import time) still start one.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from click.testing import CliRunner

from echo_duck.cli.main import cli


@dataclass
class Completed:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, input: str | None = None) -> Completed:
    result = CliRunner().invoke(cli, [str(a) for a in args], input=input)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return Completed(tuple(args), result.exit_code, result.stdout, stderr)
