"""The suite's own layout rule: shared test code lives in helper modules, never in another test module.

A test module imported by another drags its tests, fixtures and module-level set-up along, and a rename of a test
breaks an unrelated file; helpers (`harness.py`, `helpers.py`, `tests/support/...`) exist for what is shared.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _imported_test_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [name for name in names if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]


def test_no_test_module_imports_another_test_module() -> None:
    offenders = {
        str(path.relative_to(TESTS)): imported
        for path in sorted(TESTS.rglob("*.py"))
        if (imported := _imported_test_modules(path))
    }
    assert offenders == {}
