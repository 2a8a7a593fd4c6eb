"""The differences from Kafka the scenarios pin (each next to its scenario, ``@scenario(..., known=...)``), as the
README's "Differences from Kafka" table: generated here (`python -m tests.differential --known-table`), and a test
keeps the README equal to it."""

from __future__ import annotations

from tests.differential.compare import Difference
from tests.differential.registry import load_all


def expected(scenario: str) -> list[Difference]:
    return [known.difference() for known in load_all()[scenario].known]


def known_table() -> str:
    """The README table: scenario, field, the two answers, and why they differ."""
    rows = ["| Scenario | Field | group-broker | Kafka | Why |", "|---|---|---|---|---|"]
    for name, s in sorted(load_all().items()):
        for k in s.known:
            rows.append(f"| `{name}` ({s.covers}) | `{k.path}` | `{k.ours!r}` | `{k.kafka!r}` | {k.why} |")
    return "\n".join(rows) + "\n"
