"""docs/consumer-groups.md names, for every KIP-848 rule, the tests that show it: every name must exist, so the
table cannot outlive a renamed or deleted test."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "consumer-groups.md"


def _tests_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _references() -> list[tuple[str, str]]:
    """(file, test name) for every test the table names; `::name` after a comma is in the previous file."""
    found: list[tuple[str, str]] = []
    for line in DOC.read_text().splitlines():
        if not line.startswith("| "):
            continue
        current = ""
        for match in re.finditer(r"`((?:[\w/]+\.py)?)::(\w+)`", line):
            current = match.group(1) or current
            found.append((current, match.group(2)))
    return found


def test_every_test_the_rule_table_names_exists() -> None:
    references = _references()
    assert len(references) > 100
    missing = [
        f"{file}::{name}"
        for file, name in references
        if not file or not (ROOT / file).exists() or name not in _tests_in(ROOT / file)
    ]
    assert not missing, missing


def test_every_migration_rule_test_is_in_the_table() -> None:
    named = {name for _, name in _references()}
    tests = _tests_in(ROOT / "tests/broker/test_migration_wire.py")
    for path in (ROOT / "tests/coordinator/consumer_group").glob("test_migration_*.py"):
        tests |= _tests_in(path)
    assert {t for t in tests if t.startswith("test_")} <= named
