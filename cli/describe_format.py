"""The text layouts of `kafka-consumer-groups.sh`: `--describe` (shared by the operator CLI, live over the wire,
and the pipeline, as of any time from the log) and `--reset-offsets`, so both print exactly what Kafka's tool
prints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TopicPartitions = Mapping[str, Sequence[int]]
GroupDescription = Any
"""A `cli.group_describe.GroupDescription` (not imported: the pipeline imports this module alone, without the
wire client)."""

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


def _padded(widths: Sequence[int], values: Sequence[str]) -> str:
    """Each value left-justified to its width (the last one as it is), as Kafka's `%-Ns` formats."""
    return " ".join(f"{v:<{w}}" for v, w in zip(values, widths, strict=True)).rstrip()


def assignment_string(assignment: TopicPartitions | None) -> str:
    """Kafka 4's `topic:0,1;other:2` (topics sorted, partitions ascending); ``-`` when empty."""
    if not assignment:
        return "-"
    return ";".join(f"{topic}:{','.join(str(p) for p in sorted(parts))}" for topic, parts in sorted(assignment.items()))


def format_members(group: GroupDescription, *, verbose: bool) -> str:
    """`--describe --members [--verbose]`: Kafka 4's GROUP, CONSUMER-ID, [GROUP-INSTANCE-ID,] HOST, CLIENT-ID,
    #PARTITIONS and, verbose, CURRENT-EPOCH, CURRENT-ASSIGNMENT, TARGET-EPOCH, TARGET-ASSIGNMENT."""
    members = group.members
    with_instance = any(m.instance_id for m in members)
    rows = [
        [
            group.group_id,
            m.consumer_id,
            *([m.instance_id or ""] if with_instance else []),
            m.host,
            m.client_id,
            str(m.partitions),
            *(
                [
                    _cell(m.current_epoch),
                    assignment_string(m.assignment),
                    _cell(m.target_epoch),
                    assignment_string(m.target_assignment),
                ]
                if verbose
                else []
            ),
        ]
        for m in members
    ]
    header = [
        "GROUP",
        "CONSUMER-ID",
        *(["GROUP-INSTANCE-ID"] if with_instance else []),
        "HOST",
        "CLIENT-ID",
        "#PARTITIONS",
        *(["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"] if verbose else []),
    ]
    minimum = {"GROUP-INSTANCE-ID": 17, "#PARTITIONS": 15, "CURRENT-EPOCH": 15, "TARGET-EPOCH": 15}
    widths = [
        max(minimum.get(name, 20 if name.endswith("ASSIGNMENT") else 15), *(len(r[i]) for r in rows))
        for i, name in enumerate(header)
    ]
    return "\n".join(_padded(widths, line) for line in [header, *rows]) + "\n"


def format_state(group: GroupDescription, *, verbose: bool) -> str:
    """`--describe --state [--verbose]`: GROUP, COORDINATOR (ID), ASSIGNMENT-STRATEGY, STATE, [GROUP-EPOCH,
    TARGET-ASSIGNMENT-EPOCH,] #MEMBERS, in Kafka 4's widths."""
    host, port, node_id = group.coordinator
    coordinator = f"{host}:{port}  ({node_id})"
    header = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
    row = [group.group_id, coordinator, group.assignment_strategy or "-", group.state]
    widths = [max(15, len(group.group_id)), max(25, len(coordinator)), 20, 20]
    if verbose:
        header += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
        row += [_cell(group.group_epoch), _cell(group.assignment_epoch)]
        widths += [15, 25]
    header.append("#MEMBERS")
    row.append(str(len(group.members)))
    widths.append(0)
    return _padded(widths, header) + "\n" + _padded(widths, row) + "\n"


def format_group_list(groups: Sequence[Any], *, with_type: bool, with_state: bool) -> str:
    """`--list --type [--state]`: GROUP padded to max(15, longest) + 10, TYPE and STATE to 20."""
    width = max([15, *(len(g.group_id) for g in groups)]) + 10
    header, widths = ["GROUP"], [width]
    rows: list[list[str]] = [[g.group_id] for g in groups]
    if with_type:
        header.append("TYPE")
        widths.append(20)
        for row, g in zip(rows, groups, strict=True):
            row.append((g.group_type or "unknown").capitalize())
    if with_state:
        header.append("STATE")
        widths.append(20)
        for row, g in zip(rows, groups, strict=True):
            row.append(g.group_state or "Unknown")
    return "\n".join(_padded(widths, line) for line in [header, *rows]) + "\n"
