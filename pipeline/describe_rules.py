"""The rules of ``describe``, stated once: both engines implement exactly these and cite this module.

``describe`` answers what ``kafka-consumer-groups.sh --describe`` would have printed at an as-of time T, from
what the log holds. Both the Spark engine (:func:`pipeline.describe.describe`, with :func:`pipeline.asof.with_leo`
and :func:`pipeline.extract.topic_leo`) and the pure-Python engine (:mod:`pipeline.describe_python`) follow these
rules; a difference between them is a bug in one of them (``tests/pipeline/test_describe_equivalence.py``).

Input
    Records are read only from complete batches that pass their CRC (a torn tail is not there yet); a damaged
    batch or byte range yields no commit, no group record and no time, only a ``skipped`` row
    (:func:`pipeline.decode.decode_offsets_range`, :mod:`pipeline.framing`), and so does a topic batch for LEO.
    A record's log time is its batch's max timestamp. ``--group G`` keeps only the records
    of group G before anything else is computed.

1. **Commit** of (group, topic, partition): among its OffsetCommit records with log time <= T, the newest by
   position :data:`POSITION` (``__consumer_offsets`` partition, then offset; so of two records at the same ms the
   later one wins). If that record is a tombstone the partition has no commit.
2. **Members**: the group's newest GroupMetadata record by :data:`POSITION` with log time <= T. If it is a
   tombstone the group is dead and has no rows at all (not even committed partitions).
3. **Rows** (``ConsumerGroupCommand``'s): one per partition a member of that record is assigned (with the
   member's id, host and client id), plus one per committed partition nobody owns (member columns empty).
4. **LEO(T)** of a topic partition is a step function: each batch, in offset order, ends at ``last_offset + 1``
   from the running max of batch max timestamps (so it never goes down when a producer's clock does). A batch
   stamped exactly T counts. Before the first batch it is the log start (the oldest segment's base,
   :data:`LOG_START_TIME`); a partition with no segment on disk has none (empty).
5. **Lag** = LEO(T) - commit, not clamped (it may be negative, as Kafka prints it); empty without a commit.
6. **``--as-of max``** is the newest time anywhere in the (group-filtered) ``__consumer_offsets`` records (log
   time or commit time) and in the topic batches (max timestamp); 0 when there is none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pipeline.layout import SegmentFile

__all__ = [
    "ASSIGNMENT_RECORD",
    "COMMIT_RECORDS",
    "ENGINES",
    "ENGINE_AUTO_MAX_BYTES",
    "EPOCH_RECORD",
    "GROUP_RECORDS",
    "LOG_START_TIME",
    "MEMBER_RECORD",
    "POSITION",
    "choose_engine",
    "group_pattern",
    "lag",
]

#: Rules 1 and 2: the order in which records supersede each other (never their timestamps, which may tie).
POSITION = ("log_partition", "log_offset")
#: Rule 1: the record types that set or clear a commit; rule 2: those that set or end a group's members.
COMMIT_RECORDS = ("offset_commit", "offset_tombstone")
GROUP_RECORDS = ("group_metadata", "group_tombstone")
#: Rule 2 for KIP-848 groups: the group epoch record starts a generation; the member and current-assignment
#: records give its members and what they own (:mod:`pipeline.consumer_groups`). Tombstones add ``_tombstone``.
EPOCH_RECORD = "consumer_group_metadata"
MEMBER_RECORD = "consumer_group_member_metadata"
ASSIGNMENT_RECORD = "consumer_group_current_member_assignment"
#: Rule 4: the time of a partition's log-start step ("since forever": history before it was removed by retention).
LOG_START_TIME = -(2**63)

Engine = Literal["python", "spark"]
ENGINES = ("auto", "python", "spark")
#: ``--engine auto`` reads logs smaller than this in-process (about a second, everything held in memory) and
#: starts Spark for bigger ones, where its start-up (20-30 s) is paid back by parallel decoding.
ENGINE_AUTO_MAX_BYTES = 256 * 1024 * 1024


def choose_engine(requested: str, segments: Sequence[SegmentFile]) -> Engine:
    """``python`` or ``spark``: ``auto`` picks by the total size of the segment files."""
    if requested == "python":
        return "python"
    if requested == "spark":
        return "spark"
    return "python" if sum(s.size for s in segments) < ENGINE_AUTO_MAX_BYTES else "spark"


def group_pattern(group: str) -> str:
    """``--group G`` as the group-filter regex (``AnalysisConfig.groups``) that matches G and only G."""
    return re.escape(group)


def lag(log_end_offset: int | None, current_offset: int | None) -> int | None:
    """Rule 5."""
    if log_end_offset is None or current_offset is None:
        return None
    return log_end_offset - current_offset
