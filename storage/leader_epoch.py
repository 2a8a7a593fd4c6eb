"""A partition's leader epoch cache: which leader epoch started at which offset (Kafka's LeaderEpochFileCache).

Every leader of a partition has an epoch; each epoch's first offset is recorded when the leader takes over
(:meth:`LeaderEpochCache.assign` with the log end) and when a batch of a newer epoch is appended. The cache answers
OffsetForLeaderEpoch (:meth:`end_offset_for`: where an epoch ended, so a consumer or follower can detect a log
that diverged from what it read), the leader epoch of an offset (ListOffsets, :meth:`epoch_for_offset`) and the
partition's current epoch (Metadata, Fetch's and ListOffsets' ``current_leader_epoch`` checks).

It follows the log: when the log start moves (retention, DeleteRecords) the entries below it go and the first one
kept starts at the new log start (:meth:`truncate_from_start`); a truncation drops the entries at or above its
offset (:meth:`truncate_from_end`). Every change is written at once to ``leader-epoch-checkpoint`` in the
partition directory (:mod:`storage.checkpoints`, atomic), so the cache survives a restart or a kill -9 as it was.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import structlog

from storage.checkpoints import CheckpointError, parse_int, read_checkpoint, write_checkpoint

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochCache"]

_log = structlog.get_logger("storage")

#: Kafka's ``UNDEFINED_EPOCH`` and ``UNDEFINED_EPOCH_OFFSET``: OffsetForLeaderEpoch's "no such epoch" answer.
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """Leader epoch ``epoch`` wrote its first batch at ``start_offset``."""

    epoch: int
    start_offset: int


class LeaderEpochCache:
    """The epoch entries of one partition, oldest first (epochs and start offsets both strictly increasing),
    mirrored to ``path`` on every change. ``partition`` (topic, index) names it in log lines."""

    def __init__(self, path: Path, partition: tuple[str, int], entries: list[EpochEntry] | None = None) -> None:
        self.path = path
        self._partition = partition
        self._entries: list[EpochEntry] = list(entries or [])

    @classmethod
    def load(cls, path: Path, partition: tuple[str, int]) -> LeaderEpochCache | None:
        """The cache ``path`` holds; None when there is no file. Raises CheckpointError when it does not parse or
        its entries are not strictly increasing (a cache that could answer wrong end offsets)."""
        lines = read_checkpoint(path, 2)
        if lines is None:
            return None
        entries = [EpochEntry(parse_int(e, "epoch"), parse_int(o, "start offset")) for e, o in lines]
        for before, after in itertools.pairwise(entries):
            if after.epoch <= before.epoch or after.start_offset <= before.start_offset:
                raise CheckpointError(f"entries out of order: {before} then {after}")
        if any(entry.epoch < 0 or entry.start_offset < 0 for entry in entries):
            raise CheckpointError("negative epoch or start offset")
        return cls(path, partition, entries)

    def entries(self) -> list[EpochEntry]:
        return list(self._entries)

    @property
    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose leader wrote ``offset``: the last entry starting at or below it (None below all)."""
        found = None
        for entry in self._entries:
            if entry.start_offset > offset:
                break
            found = entry.epoch
        return found

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch's (leader_epoch, end_offset) for ``epoch``, as Kafka's ``endOffsetFor`` answers:
        the log end for the latest epoch; else the start of the first later epoch, paired with the largest epoch
        at or below ``epoch`` (``epoch`` itself when none is); (-1, -1) for -1 or an epoch after every entry."""
        if epoch == UNDEFINED_EPOCH or not self._entries:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self._entries[-1].epoch == epoch:
            return epoch, log_end_offset
        higher = next((entry for entry in self._entries if entry.epoch > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        floor = [entry for entry in self._entries if entry.epoch <= epoch]
        return (floor[-1].epoch if floor else epoch), higher.start_offset

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset`` (Kafka's ``assign``); True when the cache changed.

        Nothing changes for the latest epoch at the same or a later offset. Entries that the new one contradicts
        (an epoch at or above it, or a start offset at or above its offset) are removed first, as Kafka does.
        """
        if epoch < 0:
            raise ValueError(f"leader epoch must be >= 0, got {epoch}")
        latest = self._entries[-1] if self._entries else None
        if latest is not None and latest.epoch == epoch and start_offset >= latest.start_offset:
            return False
        before = list(self._entries)
        while self._entries and (self._entries[-1].epoch >= epoch or self._entries[-1].start_offset >= start_offset):
            self._entries.pop()
        self._entries.append(EpochEntry(epoch, start_offset))
        self._changed(before, "assigned")
        return True

    def truncate_from_start(self, log_start_offset: int) -> None:
        """The log now starts at ``log_start_offset``: entries wholly below it go, and the last entry starting at or
        below it is kept, moved to start there (its epoch still wrote the offsets from there on)."""
        dropped = [entry for entry in self._entries if entry.start_offset <= log_start_offset]
        if not dropped or (len(dropped) == 1 and dropped[0].start_offset == log_start_offset):
            return
        before = list(self._entries)
        kept = [entry for entry in self._entries if entry.start_offset > log_start_offset]
        self._entries = [EpochEntry(dropped[-1].epoch, log_start_offset), *kept]
        self._changed(before, "truncated from start")

    def truncate_from_end(self, end_offset: int) -> None:
        """The log now ends at ``end_offset``: entries starting at or above it go."""
        if not self._entries or self._entries[-1].start_offset < end_offset:
            return
        before = list(self._entries)
        self._entries = [entry for entry in self._entries if entry.start_offset < end_offset]
        self._changed(before, "truncated from end")

    def flush(self, *, durable: bool = True) -> None:
        """Write the entries to ``path`` (atomic); OSError propagates. ``durable=False`` (no fsync) only for entries
        the log gives back by itself (see ``PartitionLog._load_epochs``)."""
        write_checkpoint(self.path, [(entry.epoch, entry.start_offset) for entry in self._entries], durable=durable)

    def _changed(self, before: list[EpochEntry], how: str) -> None:
        """Persist a change; on a write failure the cache is put back as it was (memory never runs ahead of disk)."""
        try:
            self.flush()
        except OSError:
            self._entries = before
            raise
        _log.info(
            "leader_epoch_cache.changed",
            topic=self._partition[0],
            partition=self._partition[1],
            change=how,
            entries=[(entry.epoch, entry.start_offset) for entry in self._entries],
        )
