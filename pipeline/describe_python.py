"""``describe`` without Spark: the log read and evaluated in this process, for logs small enough to hold.

Implements the rules of :mod:`pipeline.describe_rules` (read that module for what each step means) over the very
rows the Spark data source produces (:mod:`pipeline.scan`), so both engines see the same records, damaged
batches included. Spark's start-up costs 20-30 s; reading a few MB here takes well under a second. Memory grows
with the number of records, which is why ``--engine auto`` only picks this below
:data:`pipeline.describe_rules.ENGINE_AUTO_MAX_BYTES`. Nothing here may import pyspark.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli.describe_format import DESCRIBE_COLUMNS
from pipeline.config import parse_as_of
from pipeline.damage import SkippedRange, merge_adjacent, skipped_range
from pipeline.decode import SKIP_COLUMNS, SKIPPED, TXN_ABORT, TXN_COMMIT
from pipeline.describe_rules import COMMIT_RECORDS, GROUP_RECORDS, LOG_START_TIME, lag
from pipeline.framing import SkipKind, tail_kind
from pipeline.layout import SegmentFile, active_paths, list_segments
from pipeline.offsets_fold import CONSUMER_GROUP_RECORDS, ConsumerGroupEpochs, PendingTransactions
from pipeline.scan import offsets_columns, topic_columns
from pipeline.topic_ids import topic_names

__all__ = ["describe_python", "describe_python_checked"]

Position = tuple[int, int]
TopicPartition = tuple[str, int]


@dataclass
class _Log:
    """What ``describe`` needs of the log, whatever the as-of time: every commit, group record and LEO step."""

    #: (group, topic, partition) -> [(log time, position, committed offset or None for a tombstone)]
    commits: dict[tuple[str, str, int], list[tuple[int, Position, int | None]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: group -> [(log time, position, members or None for a tombstone)]
    groups: dict[str, list[tuple[int, Position, list[dict[str, Any]] | None]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: (topic, partition) -> LEO steps sorted by (time, LEO) (rule 4)
    leo: dict[TopicPartition, list[tuple[int, int]]] = field(default_factory=dict)
    latest_ms: int = 0  # rule 6
    #: Byte ranges skipped as damaged, of both kinds of segment (reported, never read).
    skipped: list[SkippedRange] = field(default_factory=list)


def describe_python(data_dir: str | Path, as_of: str = "max", group: str | None = None) -> list[dict[str, Any]]:
    """The ``--describe`` rows (keys :data:`DESCRIBE_COLUMNS`) as of ``as_of`` (``max``, ``now`` or ISO-8601)."""
    return describe_python_checked(data_dir, as_of, group)[0]


def describe_python_checked(
    data_dir: str | Path, as_of: str = "max", group: str | None = None
) -> tuple[list[dict[str, Any]], list[SkippedRange]]:
    """The ``--describe`` rows and every byte range skipped as damaged while reading them."""
    segments = list_segments(data_dir)
    active = active_paths(segments)
    log = _read_offsets((s for s in segments if s.is_offsets), group, active, topic_names(data_dir))
    log.leo = _leo_steps([s for s in segments if not s.is_offsets], active, log.skipped)
    log.latest_ms = max(log.latest_ms, *(t for steps in log.leo.values() for t, _ in steps[1:]), 0)
    return _rows(log, parse_as_of(as_of, log.latest_ms)), merge_adjacent(log.skipped)


def _tail(s: SegmentFile, active: set[str]) -> SkipKind:
    return tail_kind(at_file_end=True, active=s.path in active)


def _skipped(s: SegmentFile, cols: dict[str, list[Any]]) -> list[SkippedRange]:
    """The skipped-range rows of one column dict (:data:`pipeline.decode.SKIP_COLUMNS`)."""
    return [
        skipped_range(s.topic, s.partition, s.base_offset, dict(zip(SKIP_COLUMNS, values, strict=True)))
        for values in zip(*(cols[name] for name in SKIP_COLUMNS), strict=True)
        if values[0] is not None
    ]


def _read_offsets(segments: Iterable[SegmentFile], group: str | None, active: set[str], names: dict[str, str]) -> _Log:
    """Commits (transactional ones once their COMMIT marker is read, at its position) and generations (classic
    GroupMetadata records and KIP-848 group epochs, :mod:`pipeline.offsets_fold`)."""
    log = _Log()
    pending = PendingTransactions()
    epochs = ConsumerGroupEpochs(names)
    for s in segments:
        for cols in offsets_columns(s.path, s.partition, s.base_offset, 0, s.size, _tail(s, active)):
            log.skipped += _skipped(s, cols)
            for part, offset, ts, kind, grp, topic, partition, committed, commit_ts, members, producer, batch in zip(
                cols["log_partition"],
                cols["log_offset"],
                cols["log_ts_ms"],
                cols["record_type"],
                cols["group"],
                cols["topic"],
                cols["partition"],
                cols["committed_offset"],
                cols["commit_ts_ms"],
                cols["members"],
                cols["producer_id"],
                cols["batch_offset"],
                strict=True,
            ):
                if kind in (TXN_COMMIT, TXN_ABORT):
                    log.latest_ms = max(log.latest_ms, ts)
                    for key, value in pending.end(part, producer, kind).items():
                        log.commits[key].append((ts, (part, offset), value))
                    continue
                if kind == SKIPPED or (group is not None and grp != group):
                    continue
                log.latest_ms = max(log.latest_ms, ts, commit_ts or 0)
                if kind in COMMIT_RECORDS and producer is not None:
                    pending.add(part, producer, (grp, topic, partition), committed)
                elif kind in COMMIT_RECORDS:
                    log.commits[(grp, topic, partition)].append((ts, (part, offset), committed))
                elif kind in GROUP_RECORDS:
                    log.groups[grp].append((ts, (part, offset), None if kind == "group_tombstone" else members))
                elif kind.startswith(CONSUMER_GROUP_RECORDS):
                    epochs.add(kind, grp, ts, (part, offset), batch, members)
    log.groups.update(epochs.generations())
    return log


def _leo_steps(
    segments: Sequence[SegmentFile], active: set[str], skipped: list[SkippedRange]
) -> dict[TopicPartition, list[tuple[int, int]]]:
    """Rule 4's step function of every topic partition on disk, the log-start step first (skipped ranges of the
    topic segments are added to ``skipped``)."""
    batches: dict[TopicPartition, list[tuple[int, int, int]]] = defaultdict(list)
    starts: dict[TopicPartition, int] = {}
    for s in segments:
        key = (s.topic, s.partition)
        starts[key] = min(starts.get(key, s.base_offset), s.base_offset)
        for cols in topic_columns(s.topic, s.partition, s.base_offset, s.path, 0, s.size, _tail(s, active)):
            skipped += _skipped(s, cols)
            batches[key].extend(
                b
                for b in zip(cols["base_offset"], cols["max_ts_ms"], cols["last_offset"], strict=True)
                if b[0] is not None
            )
    steps: dict[TopicPartition, list[tuple[int, int]]] = {}
    for key, start in starts.items():
        by_time: dict[int, int] = {}
        running = None
        for _, max_ts, last_offset in sorted(batches[key], key=lambda b: b[0]):
            running = max_ts if running is None else max(running, max_ts)
            by_time[running] = max(by_time.get(running, last_offset + 1), last_offset + 1)
        steps[key] = [(LOG_START_TIME, start), *sorted(by_time.items())]
    return steps


def _newest(records: list[tuple[int, Position, Any]], as_of_ms: int) -> tuple[int, Position, Any] | None:
    """Rules 1 and 2: the newest record by position among those written by the as-of time."""
    return max((r for r in records if r[0] <= as_of_ms), key=lambda r: r[1], default=None)


def _leo_at(steps: list[tuple[int, int]] | None, as_of_ms: int) -> int | None:
    """Rule 4: the last step at or before the as-of time (ties: the step at exactly that time counts)."""
    if steps is None:
        return None
    return steps[bisect.bisect_right(steps, (as_of_ms, float("inf"))) - 1][1]


def _rows(log: _Log, as_of_ms: int) -> list[dict[str, Any]]:
    dead: set[str] = set()
    owners: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for grp, records in log.groups.items():
        metadata = _newest(records, as_of_ms)
        if metadata is None:
            continue
        if metadata[2] is None:
            dead.add(grp)
            continue
        for member in metadata[2]:
            for assigned in member["assignment"]:
                for partition in assigned["partitions"]:
                    owners[(grp, assigned["topic"], partition)].append(member)
    committed: dict[tuple[str, str, int], int] = {}
    for key, history in log.commits.items():
        commit = _newest(history, as_of_ms)
        if commit is not None and commit[2] is not None:
            committed[key] = commit[2]
    rows: list[dict[str, Any]] = []
    for key in owners.keys() | committed.keys():
        if key[0] in dead:
            continue
        current = committed.get(key)
        leo = _leo_at(log.leo.get(key[1:]), as_of_ms)
        members: list[dict[str, Any] | None] = [*owners.get(key, [])] or [None]
        for member in members:
            values = (*key, current, leo, lag(leo, current), *_member_columns(member))
            rows.append(dict(zip(DESCRIBE_COLUMNS, values, strict=True)))
    return rows


def _member_columns(member: dict[str, Any] | None) -> tuple[str | None, str | None, str | None]:
    if member is None:
        return None, None, None
    return member["member_id"], member["client_host"], member["client_id"]
