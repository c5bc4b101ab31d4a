"""CI must run what the README tells a newcomer to run."""

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_ci_runs_the_readme_commands():
    readme = (ROOT / "README.md").read_text()
    setup, tests = re.findall(r"```sh\n(.+?)\n```", readme)[:2]
    ci = (ROOT / ".ci" / "run").read_text()
    for part in setup.split(" && ")[1:]:
        assert part.replace("pip install", "pip install -q") in ci or part in ci, part
    assert tests.strip() in ci.splitlines()
