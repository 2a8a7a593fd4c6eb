"""KIP-848 group epochs and transactional commits folded in log order, in pure Python (``describe`` without Spark).

The same answers as the Spark tables (:mod:`pipeline.consumer_groups`, :mod:`pipeline.transactions`), computed
by walking each ``__consumer_offsets`` partition's rows in offset order, which is the order
:func:`pipeline.layout.list_segments` and the decoder give them in. Nothing here may import pyspark.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pipeline.decode import TOMBSTONE_SUFFIX, TXN_COMMIT
from pipeline.describe_rules import ASSIGNMENT_RECORD, EPOCH_RECORD, MEMBER_RECORD

__all__ = ["CONSUMER_GROUP_RECORDS", "ConsumerGroupEpochs", "PendingTransactions"]

Position = tuple[int, int]
CommitKey = tuple[str, str, int]
Members = list[dict[str, Any]]

#: The prefix of every KIP-848 record type (:mod:`protocol.consumer_offsets` names them).
CONSUMER_GROUP_RECORDS = "consumer_group_"


class PendingTransactions:
    """Each producer's transactional commits of a partition, held until its marker decides them."""

    def __init__(self) -> None:
        self._open: dict[tuple[int, int], dict[CommitKey, int | None]] = defaultdict(dict)

    def add(self, log_partition: int, producer_id: int, key: CommitKey, committed: int | None) -> None:
        """A commit (None: a tombstone) of the producer's open transaction; a later one of the same key wins."""
        self._open[(log_partition, producer_id)][key] = committed

    def end(self, log_partition: int, producer_id: int, marker: str) -> dict[CommitKey, int | None]:
        """The commits a marker makes take effect: all of the transaction's on COMMIT, none on ABORT."""
        decided = self._open.pop((log_partition, producer_id), {})
        return decided if marker == TXN_COMMIT else {}


@dataclass
class _Group:
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    assignments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: (log time, position, members or None for a tombstone) per epoch record; the last one's members are
    #: filled in when the next epoch record (or the end) closes it.
    epochs: list[tuple[int, Position, Members | None]] = field(default_factory=list)
    open_epoch: bool = False
    #: The member records of the batch being read, applied once the next batch starts (see ``add``).
    batch: int | None = None
    pending: list[tuple[str, bool, dict[str, Any]]] = field(default_factory=list)


class ConsumerGroupEpochs:
    """KIP-848 records in log order -> one generation per group epoch record, its members and current assignments
    as they stand before the batch of the next epoch record (or at the end of the log): a membership change is
    written in the same batch as the epoch bump it causes, so it belongs to the next epoch."""

    def __init__(self, topic_names: Mapping[str, str]) -> None:
        self._names = topic_names
        self._groups: dict[str, _Group] = defaultdict(_Group)

    def add(
        self, kind: str, group: str, ts_ms: int, position: Position, batch_offset: int, members: Members | None
    ) -> None:
        g = self._groups[group]
        if g.batch != batch_offset:
            self._apply(g)
            g.batch = batch_offset
        base = kind.removesuffix(TOMBSTONE_SUFFIX)
        gone = kind != base
        if base == EPOCH_RECORD:
            self._close(g)
            g.epochs.append((ts_ms, position, None if gone else []))
            g.open_epoch = not gone
        elif base in (MEMBER_RECORD, ASSIGNMENT_RECORD) and members:
            g.pending.append((base, gone, members[0]))

    def generations(self) -> dict[str, list[tuple[int, Position, Members | None]]]:
        """group -> its epochs (as :attr:`pipeline.describe_python._Log.groups` holds generations)."""
        for g in self._groups.values():
            self._apply(g)
            self._close(g)
        return {group: g.epochs for group, g in self._groups.items() if g.epochs}

    @staticmethod
    def _apply(g: _Group) -> None:
        for base, gone, member in g.pending:
            table: dict[str, Any] = g.members if base == MEMBER_RECORD else g.assignments
            if gone:
                table.pop(member["member_id"], None)
            else:
                table[member["member_id"]] = member if base == MEMBER_RECORD else member["assignment"]
        g.pending.clear()

    def _close(self, g: _Group) -> None:
        if not g.open_epoch:
            return
        ts_ms, position, _ = g.epochs[-1]
        members = [
            {**m, "assignment": self._named(g.assignments.get(member_id, []))}
            for member_id, m in sorted(g.members.items())
        ]
        g.epochs[-1] = (ts_ms, position, members)
        g.open_epoch = False

    def _named(self, assignment: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**a, "topic": self._names.get(a["topic"], a["topic"])} for a in assignment]
