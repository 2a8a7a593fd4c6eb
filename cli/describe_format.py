"""The text layouts of `kafka-consumer-groups.sh`: `--describe` (shared by the operator CLI, live over the wire,
and the pipeline, as of any time from the log) and `--reset-offsets`, so both print exactly what Kafka's tool
prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FIT = -1  # a column padded to max(15, its longest cell), as Kafka pads group, topic, consumer id and host
LAST = 0  # the last column: not padded

# (row key, header, width): Kafka's column layouts
_DESCRIBE = (
    ("group", "GROUP", FIT),
    ("topic", "TOPIC", FIT),
    ("partition", "PARTITION", 10),
    ("current_offset", "CURRENT-OFFSET", 15),
    ("log_end_offset", "LOG-END-OFFSET", 15),
    ("lag", "LAG", 15),
    ("consumer_id", "CONSUMER-ID", FIT),
    ("host", "HOST", FIT),
    ("client_id", "CLIENT-ID", LAST),
)
_RESET = (
    ("group", "GROUP", FIT),
    ("topic", "TOPIC", FIT),
    ("partition", "PARTITION", 10),
    ("new_offset", "NEW-OFFSET", LAST),
)
DESCRIBE_COLUMNS = tuple(key for key, _, _ in _DESCRIBE)


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def format_table(columns: Sequence[tuple[str, str, int]], rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows sorted by group, topic and partition, a header per group, a blank line between groups; ``-`` for
    missing values; "" when there are no rows."""
    ordered = sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"]))
    if not ordered:
        return ""
    widths = [
        max(15, len(header), *(len(_cell(r[key])) for r in ordered)) if width == FIT else width
        for key, header, width in columns
    ]

    def line(values: Sequence[str]) -> str:
        return " ".join(f"{v:<{w}}" for v, w in zip(values, widths, strict=True)).rstrip()

    out: list[str] = []
    current = None
    for r in ordered:
        if r["group"] != current:
            if current is not None:
                out.append("")
            out.append(line([header for _, header, _ in columns]))
            current = r["group"]
        out.append(line([_cell(r[key]) for key, _, _ in columns]))
    return "\n".join(out) + "\n"


def format_describe(rows: Sequence[Mapping[str, Any]]) -> str:
    """`--describe`: group, topic, consumer id and host padded to max(15, longest), numbers to 15, partition to
    10."""
    return format_table(_DESCRIBE, rows)


def format_reset(rows: Sequence[Mapping[str, Any]]) -> str:
    """`--reset-offsets`: GROUP, TOPIC, PARTITION, NEW-OFFSET in the same layout."""
    return format_table(_RESET, rows)
