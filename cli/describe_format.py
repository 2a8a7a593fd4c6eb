"""The text layout of `kafka-consumer-groups.sh --describe`, shared by the operator CLI (live, over the wire) and
the pipeline (as of any time, from the log), so both print exactly what Kafka's tool prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DESCRIBE_COLUMNS = (
    "group",
    "topic",
    "partition",
    "current_offset",
    "log_end_offset",
    "lag",
    "consumer_id",
    "host",
    "client_id",
)
_HEADERS = (
    "GROUP",
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)


def format_describe(rows: Sequence[Mapping[str, Any]]) -> str:
    """Kafka's layout: group, topic, consumer id and host padded to max(15, longest), numbers to 15, partition to
    10, ``-`` for missing values, a blank line between groups."""

    def cell(value: Any) -> str:
        return "-" if value is None else str(value)

    ordered = sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"]))
    if not ordered:
        return ""
    widths = {
        name: max(15, *(len(cell(r[name])) for r in ordered), len(header))
        for name, header in (("group", "GROUP"), ("topic", "TOPIC"), ("consumer_id", "CONSUMER-ID"), ("host", "HOST"))
    }

    def line(values: Sequence[str]) -> str:
        g, t, p, cur, leo, lag, cid, host, client = values
        return (
            f"{g:<{widths['group']}} {t:<{widths['topic']}} {p:<10} {cur:<15} {leo:<15} {lag:<15} "
            f"{cid:<{widths['consumer_id']}} {host:<{widths['host']}} {client}"
        ).rstrip()

    out: list[str] = []
    current = None
    for r in ordered:
        if r["group"] != current:
            if current is not None:
                out.append("")
            out.append(line(_HEADERS))
            current = r["group"]
        out.append(line([cell(r[c]) for c in DESCRIBE_COLUMNS]))
    return "\n".join(out) + "\n"
