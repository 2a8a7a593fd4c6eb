"""Every difference from Kafka the differential suite knows of, pinned: the test fails if one disappears (fixed:
delete it here) or a new one appears. Each carries the reason; the README's "Differences from Kafka" table is
generated from this file (`python -m tests.differential --known-table`) and a test keeps the two equal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.differential.compare import Difference


@dataclass(frozen=True, slots=True)
class Known:
    path: str
    ours: Any
    kafka: Any
    why: str

    def difference(self) -> Difference:
        return Difference(self.path, self.ours, self.kafka)


KNOWN: dict[str, tuple[Known, ...]] = {}


def expected(scenario: str) -> list[Difference]:
    return [known.difference() for known in KNOWN.get(scenario, ())]


def known_table() -> str:
    """The README table: scenario, field, the two answers, and why they differ."""
    rows = ["| Scenario | Field | group-broker | Kafka | Why |", "|---|---|---|---|---|"]
    for scenario, items in sorted(KNOWN.items()):
        for k in items:
            rows.append(f"| `{scenario}` | `{k.path}` | `{k.ours!r}` | `{k.kafka!r}` | {k.why} |")
    return "\n".join(rows) + "\n"
