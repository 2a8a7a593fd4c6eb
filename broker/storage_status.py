"""What the broker knows about damaged data and the loading of `__consumer_offsets`, in one JSON-able shape.

The control API (`GET /storage`), the `group-broker storage` command and `/metrics` all read this, so they never
disagree. Nothing here is tracked separately: the coordinator knows each offsets partition's state and why a load
failed, the logs know their damaged ranges and quarantined files (each reported once, :mod:`storage.damage`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from broker.offsets_log import OFFSETS_TOPIC
from coordinator.coordinator import GroupCoordinator
from storage.log_manager import LogManager

#: Offsets partition states, Kafka's CoordinatorState names for the ones this coordinator has.
OFFSETS_PARTITION_STATES = ("loading", "active", "failed")


@dataclass(frozen=True, slots=True)
class OffsetsPartitionStatus:
    partition: int
    state: str
    #: Damaged ranges of the partition's log that loading (or a later read) skipped.
    skipped_ranges: int
    #: Why the load failed (state "failed"), else None.
    error: str | None


def offsets_partitions(coordinator: GroupCoordinator, logs: LogManager) -> list[OffsetsPartitionStatus]:
    failures = coordinator.load_failures()
    skipped: dict[int, int] = {}
    for damage in logs.damaged_ranges():
        if damage.topic == OFFSETS_TOPIC:
            skipped[damage.partition] = skipped.get(damage.partition, 0) + 1
    return [
        OffsetsPartitionStatus(partition, state, skipped.get(partition, 0), failures.get(partition))
        for partition, state in coordinator.owned_partitions().items()
    ]


def storage_status(coordinator: GroupCoordinator, logs: LogManager) -> dict[str, Any]:
    """``offsets_partitions`` (every owned partition), ``damaged_ranges`` and ``quarantined_files``."""
    return {
        "offsets_partitions": [
            {"partition": p.partition, "state": p.state, "skipped_ranges": p.skipped_ranges, "error": p.error}
            for p in offsets_partitions(coordinator, logs)
        ],
        "damaged_ranges": [d.as_dict() for d in logs.damaged_ranges()],
        "quarantined_files": [q.as_dict() for q in logs.quarantined_files()],
    }


def format_storage_status(status: dict[str, Any]) -> str:
    """The text the CLI prints: offsets partitions that are not plainly loaded, then the damage, then the moves."""
    lines: list[str] = []
    partitions = status["offsets_partitions"]
    notable = [p for p in partitions if p["state"] != "active" or p["skipped_ranges"]]
    counts = {state: sum(p["state"] == state for p in partitions) for state in OFFSETS_PARTITION_STATES}
    lines.append(f"{OFFSETS_TOPIC}: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    for p in notable:
        detail = f"  partition {p['partition']}: {p['state']}, {p['skipped_ranges']} damaged range(s) skipped"
        lines.append(detail + (f", error: {p['error']}" if p["error"] else ""))
    lines.append(f"damaged ranges: {len(status['damaged_ranges'])}")
    lines.extend(
        f"  {d['topic']}-{d['partition']} {d['segment']} bytes {d['start']}..{d['end']}: {d['reason']}"
        for d in status["damaged_ranges"]
    )
    lines.append(f"quarantined files: {len(status['quarantined_files'])}")
    lines.extend(
        f"  {q['topic']}-{q['partition']} {q['original']} -> {q['moved_to']}: {q['reason']}"
        for q in status["quarantined_files"]
    )
    return "\n".join(lines) + "\n"
