"""Field-by-field comparison of two normalised transcripts: every leaf that differs, with its path."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tests.differential.session import Step

MISSING = "<missing>"


@dataclass(frozen=True, slots=True)
class Difference:
    """One leaf where group-broker (``ours``) and Kafka (``kafka``) answered differently."""

    path: str
    ours: Any
    kafka: Any

    def __str__(self) -> str:
        return f"{self.path}: group-broker {self.ours!r}, Kafka {self.kafka!r}"


def _walk(path: str, ours: Any, kafka: Any) -> Iterator[Difference]:
    if isinstance(ours, dict) and isinstance(kafka, dict):
        for key in list(ours) + [k for k in kafka if k not in ours]:
            yield from _walk(f"{path}.{key}", ours.get(key, MISSING), kafka.get(key, MISSING))
    elif isinstance(ours, list) and isinstance(kafka, list) and len(ours) == len(kafka):
        for index, (a, b) in enumerate(zip(ours, kafka, strict=True)):
            yield from _walk(f"{path}[{index}]", a, b)
    elif ours != kafka:
        yield Difference(path, ours, kafka)


def differences(ours: Sequence[Step], kafka: Sequence[Step]) -> list[Difference]:
    """Steps are matched by position and must carry the same label; a missing step is one difference."""
    found: list[Difference] = []
    for index in range(max(len(ours), len(kafka))):
        a = ours[index] if index < len(ours) else None
        b = kafka[index] if index < len(kafka) else None
        if a is None or b is None or a.label != b.label:
            found.append(Difference(f"step {index}", a and a.label, b and b.label))
            break
        found.extend(_walk(a.label, a.outcome, b.outcome))
    return found
