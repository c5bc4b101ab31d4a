"""CI must run what the README tells a newcomer to run, and the README's examples run as written."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def test_ci_runs_the_readme_commands():
    setup, tests = re.findall(r"```sh\n(.+?)\n```", README)[:2]
    ci = (ROOT / ".ci" / "run").read_text()
    for part in setup.split(" && ")[1:]:
        assert part.replace("pip install", "pip install -q") in ci or part in ci, part
    assert tests.strip() in ci.splitlines()


def test_the_readme_is_for_users():
    assert len(README.encode()) <= 15 * 1024
    first_screen = "\n".join(README.splitlines()[:60])
    assert "recall(" in first_screen  # how to recall is on the first screen
    for dead in ("../shared", "SPEC", "pip install echo-duck", "jupyter lab notebooks/"):
        assert dead not in README, dead
    for link in re.findall(r"\]\(([^)#]+)\)", README):
        assert (ROOT / link).exists(), link


def test_the_quickstart_runs_as_written(tmp_path):
    quickstart = re.findall(r"```python\n(.+?)\n```", README, re.S)[0]
    result = subprocess.run([sys.executable, "-c", quickstart], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("The project uses pnpm 9"), lines[0]  # the newest version answers
    assert "User prefers answers in Chinese" in result.stdout  # the snapshot
    assert "2" in lines and (tmp_path / "agent.duckdb").exists()


@pytest.mark.slow
def test_the_shell_example_runs_as_written(tmp_path):
    block = re.findall(r"```sh\n(.+?)\n```", README, re.S)[2]
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    outputs = []
    for line in block.splitlines():
        result = subprocess.run(shlex.split(line), cwd=tmp_path, capture_output=True, text=True, env=env,
                                timeout=300)
        assert result.returncode == 0, (line, result.stderr)
        outputs.append(result.stdout)
    assert "User prefers answers in Chinese" in outputs[1]
    assert "user" in outputs[2]


@pytest.mark.parametrize("page", ["echo_duck/cli/REFERENCE.md", "echo_duck/store/REFERENCE.md", "sql/REFERENCE.md",
                                  "echo_duck/bench/results/RESULTS.md", "CHANGELOG.md", "LICENSE"])
def test_the_pages_the_readme_points_to_exist(page):
    assert (ROOT / page).is_file()
