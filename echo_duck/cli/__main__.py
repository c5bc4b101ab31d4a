"""``python -m echo_duck.cli``: the same as the ``echo-duck`` command."""

from .main import cli

cli(prog_name="echo-duck")
