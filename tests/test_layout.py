"""The package layout is the architecture: each subpackage imports only what its ``__init__`` allows
("May import: ..."), no module imports itself back through others, and ``import echo_duck`` stays light."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "echo_duck"
PRIMITIVES = {"errors", "models"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every echo_duck module ``name`` imports, at module level or inside a function."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        found |= {t for t in targets if t in modules and t != name}
    if "TYPE_CHECKING" in path.read_text():  # typing-only imports are not edges
        found -= _type_checking_only(path, name, modules, is_package)
    return found


def _type_checking_only(path: Path, name: str, modules: dict[str, Path], is_package: bool) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for sub in node.body:
                if isinstance(sub, ast.ImportFrom) and sub.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - sub.level + 1]
                    out.add(".".join(base + ([sub.module] if sub.module else [])))
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "store"  # the root package is the facade's public face


def _allowed() -> dict[str, set[str]]:
    rules: dict[str, set[str]] = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        match = re.search(r"May import:(.*?)(?:\.\s*$|\.\s+[A-Z])", doc, re.S)
        assert match, f"{init.parent.name}/__init__.py must say what it may import ('May import: ...')"
        rules[init.parent.name] = set(re.findall(r"``(\w+)``", match.group(1)))
    return rules


def test_every_subpackage_says_what_it_may_import_and_keeps_to_it():
    allowed = _allowed()
    assert set(allowed) >= {"storage", "text", "embed", "index", "write", "recall", "lifecycle", "kb", "io", "store",
                            "cli", "bench"}
    broken = []
    for module, targets in _graph().items():
        layer = _layer(module)
        for target in targets:
            other = _layer(target)
            if layer in PRIMITIVES:
                if other != layer:
                    broken.append(f"{module} -> {target} (errors and models import nothing of echo_duck)")
            elif layer in allowed and other != layer and other not in allowed[layer]:
                broken.append(f"{module} -> {target} ({layer}/ may import {sorted(allowed[layer])})")
    assert not broken, "\n".join(sorted(broken))


def test_the_allowed_imports_point_down_only():
    allowed = _allowed()
    for layer, others in allowed.items():
        for other in others - PRIMITIVES:
            assert layer not in allowed.get(other, set()), f"{layer} and {other} may import each other"


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state[nxt] == 1:
                return stack[stack.index(nxt):] + [nxt]
            if state[nxt] == 0 and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if state[node] == 0:
            cycle = visit(node)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_package_folder_is_not_flat():
    flat = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__.py", "errors.py", "models.py"]


@pytest.mark.parametrize("statement, forbidden", [
    ("import echo_duck", ["duckdb", "polars", "numpy", "pyarrow", "jieba", "onnxruntime", "echo_duck.store.facade"]),
    ("import echo_duck.cli.main", ["duckdb", "polars", "numpy", "pyarrow", "jieba", "onnxruntime"]),
])
def test_importing_is_light(statement, forbidden):
    code = f"{statement}; import sys; print(sorted(m for m in {forbidden!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", f"{statement} imported {out}"


def test_opening_a_store_loads_no_frames_no_parquet_and_no_scanner_rules(tmp_path):
    """Reopening a store with rows leaves polars (sql()/audit() frames), pyarrow's compute/dataset/parquet modules
    (recall, archive), the scanner's rule layers and the model for later. (Creating one registers Arrow tables
    with DuckDB, which imports pyarrow.dataset itself.)"""
    forbidden = ["polars", "pyarrow.compute", "pyarrow.dataset", "pyarrow.parquet", "echo_duck.write.scan.phrases",
                 "echo_duck.write.scan.exfil", "echo_duck.write.scan.verdict", "onnxruntime"]
    path = str(tmp_path / "m.duckdb")
    report = f"import sys; print(sorted(m for m in {forbidden!r} if m in sys.modules))"
    on_create = f"import sys; print(sorted(m for m in {forbidden!r} if m in sys.modules and 'pyarrow' not in m))"

    def run(code: str) -> str:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()

    assert run(f"import echo_duck; echo_duck.open({path!r}, embedder='hash').close(); {on_create}") == "[]"  # created
    run(f"import echo_duck\nwith echo_duck.open({path!r}, embedder='hash') as m:\n"
        "    m.remember_many([dict(content=f'row {i} of the test store', type='environment') for i in range(3)])")
    assert run(f"import echo_duck; echo_duck.open({path!r}, embedder='hash').close(); {report}") == "[]"  # reopened
