"""The log of one topic partition: an ordered list of segments, the last one active.

This is Kafka's ``UnifiedLog`` reduced to a single broker: appends validate and assign offsets
(:mod:`storage.validation`), roll segments on size, age or full indexes, and write to the page cache; durability
is explicit (:meth:`PartitionLog.flush`, or ``flush.messages`` / ``flush.ms``). Reads return whole batches
straight from the files, never decoding them, which is what Fetch sends on the wire. Retention deletes whole
segments from the front; the log start offset is always the base offset of the first segment.

Recovery on open follows Kafka's recovery point: segments wholly below the last flushed offset are trusted
after index sanity checks, the rest (always including the active segment) are scanned batch by batch with CRC
checks. Recovery never deletes what it did not prove to be its own garbage (Decision 9, :mod:`storage.damage`):

* only the active segment's unflushed tail is cut off: its first damage past the recovery point, or a torn end
  with nothing valid after it (what a crash leaves);
* damage anywhere else (an older segment, flushed data of the active one) is a damaged range: kept on disk,
  reported once with one warning, skipped by every reader; later segments are kept;
* files that are not valid segments (an unparsable name, a base offset inside the previous segment's offsets, no
  valid batch at all) are moved to the quarantine folder with one warning each;
* leftovers of the log's own operations are still removed or finished: ``.cleaned`` and ``.deleted`` files,
  index files without a log, and an interrupted ``.swap``.

Damage a trusted segment hides (a CRC no cheap check reads) is found by readers: :meth:`PartitionLog.read`
checks the CRC of every batch it returns, and a damaged batch is reported and skipped the same way.

Transactions (KIP-98): every batch that carries a producer id goes through the partition's producer state
(:mod:`storage.producer_state`) before it is written, which checks epochs and sequences, recognises retried
batches, and tracks the transactions open on the partition; :meth:`PartitionLog.append_end_txn_marker` writes the
COMMIT/ABORT marker that closes one. The last stable offset (the first offset of the oldest open transaction, or
the high watermark) bounds what read_committed consumers see, and each segment's ``.txnindex`` lists the aborted
transactions whose markers it holds (:mod:`storage.txn_index`). The producer state is rebuilt the first time it is
needed after the log is opened (:mod:`storage.txn_replay`): from the latest producer state snapshot
(:mod:`storage.producer_snapshot`, written when a segment rolls and at :meth:`PartitionLog.close`) above the log
start and at or below the log end, replaying only the batches after it, or from the log start when there is none
(Kafka's rebuildProducerState: what lies below the log start is not replayed). The aborted-transaction indexes that
cannot be trusted are rebuilt by the same pass, which reads those segments from their start (from the latest
snapshot at or before them) into a scratch state; a damaged ``.txnindex`` or snapshot is quarantined first.
Snapshots beyond the log end (a torn tail cut by recovery, a truncation) describe offsets the log no longer has,
and those at or below the log start producers that may be gone: both are deleted, as Kafka does. Moving the log
start forgets no producer until then (Kafka's onLogStartOffsetIncremented).

Everything is synchronous. The asyncio server calls it from its loop thread; the one other caller is the
compaction cleaner (:mod:`storage.cleaner`), which runs in a worker thread and only reads closed segment files
through its own descriptors, then calls :meth:`PartitionLog.replace_segments`. So that the two can meet safely, a
re-entrant lock guards the segment list: every method that reads through it or changes it holds the lock, and
``replace_segments`` holds it only for checks, renames and the list swap, never for an fsync.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
import shutil
import struct
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

import structlog

from protocol.control_records import EndTxnMarker, decode_end_txn_marker, encode_end_txn_marker_batch
from protocol.errors import DecodeError
from protocol.records import (
    NO_PRODUCER_ID,
    BatchHeader,
    RecordBatch,
    iter_batches,
    peek_batch_header,
    read_batch_records,
)
from storage.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    CheckpointError,
    read_log_start,
    write_log_start,
)
from storage.clock import Clock, wall_clock_ms
from storage.config import INT64_MAX, LogConfig
from storage.damage import DamagedRange, QuarantinedFile, move_to_quarantine, topic_partition_of
from storage.errors import (
    CorruptLogError,
    InvalidRecordError,
    KafkaStorageError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
    os_error_fields,
)
from storage.files import fsync_dir, is_empty_file
from storage.leader_epoch import EpochEntry, LeaderEpochCache
from storage.producer_snapshot import (
    SNAPSHOT_SUFFIX,
    SnapshotError,
    decode_snapshot,
    list_snapshots,
    snapshot_path,
    write_snapshot,
)
from storage.producer_state import CompletedTxn, ProducerAppend, ProducerStateManager, ProducerSummary
from storage.segment import (
    CLEANED_SUFFIX,
    INDEX_SUFFIX,
    LOG_SUFFIX,
    SWAP_SUFFIX,
    TIME_INDEX_SUFFIX,
    TXN_INDEX_SUFFIX,
    LogSegment,
    SegmentSpec,
    TimestampOffset,
    parse_segment_name,
    segment_name,
)
from storage.txn_index import AbortedTxn
from storage.txn_replay import ReplayFrom, aborted_entry, collect_aborted, rebuild_producer_state
from storage.validation import AppendOrigin, ValidatedAppend, validate_and_assign_offsets

__all__ = ["AppendOrigin", "AppendResult", "CommittedRead", "PartitionLog", "TimestampOffset"]

_log = structlog.get_logger("storage")
#: A v2 batch header's producer id: after base offset, length, leader epoch, magic, CRC, attributes, last offset
#: delta and the two timestamps (protocol.records has the whole layout).
_PRODUCER_ID = struct.Struct(">q")
_PRODUCER_ID_AT = 43

#: Leftovers that are deleted on open: an interrupted cleaning, Kafka's delayed-delete files, and the index files
#: of a swap killed between its renames (indexes are rebuilt from the data, as Kafka's LogLoader does), and a
#: snapshot whose atomic write was interrupted.
_DISCARD_SUFFIXES = (
    CLEANED_SUFFIX,
    ".deleted",
    INDEX_SUFFIX + SWAP_SUFFIX,
    TIME_INDEX_SUFFIX + SWAP_SUFFIX,
    TXN_INDEX_SUFFIX + SWAP_SUFFIX,  # rebuilt by the producer-state replay, which a missing .txnindex triggers
    SNAPSHOT_SUFFIX + ".tmp",
    LEADER_EPOCH_CHECKPOINT + ".tmp",  # an atomic write killed before its rename: the old file is still there
    LOG_START_OFFSET_CHECKPOINT + ".tmp",
)
#: A segment's index files, which describe its log file and go where it goes.
_INDEX_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
#: Names that claim to be segment files; one that does not parse as ``<20 digits><suffix>`` is quarantined.
_SEGMENT_SUFFIXES = (LOG_SUFFIX, *_INDEX_SUFFIXES, LOG_SUFFIX + SWAP_SUFFIX)
_ITER_CHUNK = 1024 * 1024


def _unparsable_segment_name(name: str) -> bool:
    return name.endswith(_SEGMENT_SUFFIXES) and all(parse_segment_name(name, x) is None for x in _SEGMENT_SUFFIXES)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _locked(method: Callable[Concatenate[PartitionLog, _P], _R]) -> Callable[Concatenate[PartitionLog, _P], _R]:
    """Run ``method`` holding the log's lock, so a cleaner thread never sees (or makes) a half-changed list."""

    @functools.wraps(method)
    def locked(self: PartitionLog, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def _storage_errors(method: Callable[Concatenate[PartitionLog, _P], _R]) -> Callable[Concatenate[PartitionLog, _P], _R]:
    """Turn an OSError of a write or fsync into KafkaStorageError: the one place where the file system's failures
    (ENOSPC, EIO, EDQUOT, ...) become the Kafka error the broker answers with, instead of an exception that drops
    the connection."""

    @functools.wraps(method)
    def guarded(self: PartitionLog, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            fields = os_error_fields(exc)
            _log.warning("storage.write_failed", directory=str(self.directory), operation=method.__name__, **fields)
            raise KafkaStorageError(f"{method.__name__} to {self.directory.name} failed: {fields['error']}") from exc

    return guarded


@dataclass(frozen=True, slots=True)
class SegmentSlice:
    """``length`` bytes at ``position`` of a segment file, through a descriptor of its own (closed by `close`)."""

    fd: int
    position: int
    length: int

    def close(self) -> None:
        os.close(self.fd)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What a Produce response needs for one partition."""

    base_offset: int
    last_offset: int
    #: The broker's timestamp when the topic uses LogAppendTime, else -1; for a duplicate the original batch's max
    #: timestamp, whatever the topic uses (as Kafka answers both).
    log_append_time_ms: int
    log_start_offset: int
    #: A client's retry of a batch already in the log: nothing was written, the offsets are the original's.
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class CommittedRead:
    """What a read_committed Fetch returns for a partition: whole batches below the last stable offset, and the
    aborted transactions overlapping them (empty when nothing was read)."""

    slices: list[SegmentSlice]
    aborted: list[AbortedTxn]
    last_stable_offset: int


class PartitionLog:
    """A partition's segments in ``directory``; see the module docstring for the guarantees.

    ``recovery_point`` is the offset up to which the log was known to be flushed (from the log manager's
    checkpoint); None means unknown, so every segment is scanned. ``clock`` gives the time wherever a caller
    passes none (``now_ms`` here is the load time; by default a reading of ``clock``): the broker injects its own
    clock, so virtual time moves segment.ms, retention.ms and flush.ms too (:mod:`storage.clock`).
    """

    def __init__(
        self,
        directory: Path,
        config: LogConfig | None = None,
        *,
        recovery_point: int | None = None,
        now_ms: int | None = None,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.directory = Path(directory)
        self._config = config if config is not None else LogConfig()
        self._clock = clock
        now = clock() if now_ms is None else now_ms
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        #: Rolled segments whose data and indexes still need an fsync.
        self._flush_pending: list[LogSegment] = []
        self._dir_dirty = False
        self._unflushed_records = 0
        self._last_flush_ms = now
        self._closed = False
        #: Guards the segment list against the cleaner thread (module docstring); re-entrant for nested calls.
        self._lock = threading.RLock()
        self.recovery_point = 0
        self.topic, self.partition = topic_partition_of(self.directory)
        self._damaged: list[DamagedRange] = []
        self._quarantined: list[QuarantinedFile] = []
        #: Producer entries and open transactions; None until first needed, then rebuilt from the log.
        self._producer_state: ProducerStateManager | None = None
        #: The log start a DeleteRecords moved inside the first segment (the first segment's base is the floor).
        self._log_start = 0
        #: Which leader epoch started where (:mod:`storage.leader_epoch`); loaded or rebuilt by `_load`.
        self._epochs = LeaderEpochCache(self.directory / LEADER_EPOCH_CHECKPOINT, (self.topic, self.partition))
        self.directory.mkdir(parents=True, exist_ok=True)
        self._load(recovery_point, now)

    # --- properties -------------------------------------------------------------------------------------------

    @property
    def config(self) -> LogConfig:
        return self._config

    @property
    def clock(self) -> Clock:
        """Where this log takes the time when a caller passes none (the cleaner uses it too)."""
        return self._clock

    def _now(self, now_ms: int | None) -> int:
        return self._clock() if now_ms is None else now_ms

    @_locked
    def update_config(self, config: LogConfig) -> None:
        """Apply new topic configs; they take effect from the next append/roll/retention pass."""
        self._config = config
        for segment in self._segments:
            segment.index_interval_bytes = config.index_interval_bytes

    @property
    def log_start_offset(self) -> int:
        """The first offset a reader may ask for: the first segment's base, or above it where DeleteRecords (or a
        log start restored from ``log-start-offset``) moved it inside that segment."""
        return max(self._log_start, self._segments[0].base_offset)

    @property
    def log_end_offset(self) -> int:
        """The next offset to be assigned (Kafka's LEO, and the high watermark of a single broker)."""
        return self._segments[-1].next_offset

    def earliest(self) -> int:
        """ListOffsets EARLIEST_TIMESTAMP (-2)."""
        return self.log_start_offset

    def latest(self) -> int:
        """ListOffsets LATEST_TIMESTAMP (-1)."""
        return self.log_end_offset

    @property
    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def has_unflushed(self) -> bool:
        return bool(self._flush_pending) or self._dir_dirty or self.recovery_point < self.log_end_offset

    @_locked
    def segments(self) -> list[LogSegment]:
        """All segments, oldest first (the last is active); for tools and tests."""
        return list(self._segments)

    @_locked
    def closed_segments(self) -> list[LogSegment]:
        """Segments that no longer take appends: what a compaction cleaner may rewrite."""
        return list(self._segments[:-1])

    def damaged_ranges(self) -> list[DamagedRange]:
        """Every damaged byte range found so far (at recovery or by readers), each once, oldest first."""
        with self._lock:
            return list(self._damaged)

    def quarantined_files(self) -> list[QuarantinedFile]:
        """Files recovery moved to the quarantine folder."""
        with self._lock:
            return list(self._quarantined)

    @_locked
    def report_damage(
        self, segment: LogSegment, position: int, reason: str, *, end: int | None = None, min_offset: int = -1
    ) -> bool:
        """Damage a reader outside the log found in ``segment`` (the cleaner, which reads files through its own
        descriptors in a worker thread): noted and reported once, like damage found by :meth:`read`.

        ``[position, end)`` is damaged; without ``end`` the range runs to the next valid batch from ``min_offset``
        on. Returns False (nothing noted) when ``segment`` is no longer part of the log.
        """
        if segment not in self._segments:
            return False
        if end is None:
            segment.damage_from(position, reason, min_offset)
        else:
            segment.note_damage(position, end, reason)
        return True

    def _on_damage(self, segment: LogSegment, start: int, end: int, reason: str) -> None:
        damage = DamagedRange(self.topic, self.partition, segment.log_path.name, start, end, reason)
        self._damaged.append(damage)
        _log.warning(
            "log_damaged_range",
            topic=self.topic,
            partition=self.partition,
            segment=damage.segment,
            start=start,
            end=end,
            reason=reason,
        )

    # --- appending --------------------------------------------------------------------------------------------

    @_locked
    @_storage_errors
    def append(
        self,
        records: bytes | bytearray | memoryview,
        *,
        now_ms: int,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        leader_epoch: int | None = None,
        marker_transaction_version: int = 0,
    ) -> AppendResult:
        """Validate one or more v2 batches, assign offsets from the log end, and append them.
        ``marker_transaction_version``: the transaction version of the markers among them (their epoch check).

        All batches land in one segment, in one write. Every batch's partitionLeaderEpoch is stamped with
        ``leader_epoch``, by default the partition's current one (:attr:`leader_epoch`), as Kafka's leader does; an
        epoch newer than the cache's latest is recorded there as starting at the first batch.

        Raises the typed errors of :mod:`storage.validation`,
        RecordListTooLargeError when the set exceeds ``segment.bytes``, or KafkaStorageError when the file system
        refuses the write; then the log is as it was (no partial batch, same log end), so appends work again once
        the cause is gone. Only if the write succeeded and the ``flush.messages`` fsync after it failed are the
        batches in the log although the append raised, like a Kafka produce that timed out.

        Batches with a producer id are checked against the producer state first (its errors, as
        :mod:`storage.producer_state` lists them, leave the log unchanged); a client's retry of a batch already
        written is not written again but answered with the original's offsets (``duplicate`` set).
        """
        self._check_open()
        config = self._config
        epoch = self.leader_epoch if leader_epoch is None else leader_epoch
        validated = validate_and_assign_offsets(
            records,
            next_offset=self.log_end_offset,
            now_ms=now_ms,
            config=config,
            origin=origin,
            leader_epoch=epoch,
        )
        size = len(validated.data)
        if size > config.segment_bytes:
            raise RecordListTooLargeError(f"{size} bytes of batches exceed segment.bytes ({config.segment_bytes})")
        staged = self._check_producers(validated, origin, marker_transaction_version)
        if staged is not None and staged.duplicate is not None:
            original = staged.duplicate
            return AppendResult(
                original.first_offset, original.last_offset, original.timestamp, self.log_start_offset, duplicate=True
            )
        segment = self._segments[-1]
        if segment.should_roll(
            append_size=size,
            max_timestamp=validated.max_timestamp,
            last_offset=validated.last_offset,
            now_ms=now_ms,
            segment_bytes=config.segment_bytes,
            segment_ms=config.segment_ms,
        ):
            segment = self._roll(now_ms)
        if epoch > self.leader_epoch:
            self._epochs.assign(epoch, validated.first_offset)  # before the write: the cache never lags the log
        segment.append(validated.data, validated.batches, now_ms=now_ms)
        if staged is not None:
            self._note_transactions(staged.started, self._producers().commit(staged), segment)
        self._unflushed_records += validated.record_count
        if self._unflushed_records >= config.flush_messages:
            self.flush()
        return AppendResult(
            base_offset=validated.first_offset,
            last_offset=validated.last_offset,
            log_append_time_ms=now_ms if config.log_append_time else -1,
            log_start_offset=self.log_start_offset,
        )

    @_locked
    def append_end_txn_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        marker: EndTxnMarker,
        *,
        now_ms: int | None = None,
        leader_epoch: int | None = None,
        transaction_version: int = 0,
    ) -> AppendResult:
        """Write the COMMIT/ABORT marker of ``producer_id``'s transaction (Kafka's ``appendAsLeader`` of
        ``withEndTransactionMarker``, origin COORDINATOR) and close the transaction on this partition.

        Refused, with nothing written, as Kafka refuses it (T37): InvalidProducerEpochError when ``producer_epoch``
        is older than the producer's current epoch (for ``transaction_version`` 2: not newer, unless the marker
        repeats the last one), TransactionCoordinatorFencedError when the marker's
        coordinator epoch is older than the last marker's. A marker for a producer with no open transaction here
        is written all the same (it completes nothing). An ABORT adds the transaction to the segment's
        aborted-transaction index; either way the last stable offset moves past the transaction.
        """
        now = self._now(now_ms)
        data = encode_end_txn_marker_batch(
            marker, producer_id=producer_id, producer_epoch=producer_epoch, timestamp=now
        )
        return self.append(
            data,
            now_ms=now,
            origin=AppendOrigin.COORDINATOR,
            leader_epoch=leader_epoch,
            marker_transaction_version=transaction_version,
        )

    def _check_producers(
        self, validated: ValidatedAppend, origin: AppendOrigin, marker_transaction_version: int = 0
    ) -> ProducerAppend | None:
        """The producer-state effect of an append, checked (raises) but not applied; None without producer ids."""
        batches: list[tuple[BatchHeader, EndTxnMarker | None]] = []
        data = validated.data
        for meta in validated.batches:
            if _PRODUCER_ID.unpack_from(data, meta.position + _PRODUCER_ID_AT)[0] == NO_PRODUCER_ID:
                continue  # read alone: the header was checked by the validation, and most batches have no producer
            header = peek_batch_header(data, meta.position)
            if not header.is_control:
                batches.append((header, None))
                continue
            try:
                records = read_batch_records(data, meta.position, header)
                if records:  # an empty control batch is a cleaned-away transaction: Kafka ignores it
                    batches.append((header, decode_end_txn_marker(records[0])))
            except DecodeError as exc:
                raise InvalidRecordError(f"control batch at offset {header.base_offset}: {exc.reason}") from None
        if not batches:
            return None
        return self._producers().prepare(batches, origin, marker_transaction_version)

    def _producers(self) -> ProducerStateManager:
        """The producer state, loaded and replayed the first time it is needed (call with the lock held): from the
        latest snapshot above the log start, else from the log start (Kafka's rebuildProducerState, so the batches
        below the log start are not replayed). When a segment whose aborted-transaction index must be rebuilt
        comes before that, the replay also reads it from its start, for the index only (see
        :func:`rebuild_producer_state`)."""
        state = self._producer_state
        if state is None:
            snapshot_offset, snapshot = self._latest_snapshot(self.log_end_offset)
            start = (
                ReplayFrom(self.log_start_offset) if snapshot is None else ReplayFrom(snapshot_offset or 0, snapshot)
            )
            limit = self._txn_index_rebuild_from()
            index_start = None
            if limit < start.offset:
                index_offset, index_snapshot = self._latest_snapshot(limit)
                index_start = (
                    ReplayFrom(self._segments[0].base_offset)
                    if index_snapshot is None
                    else ReplayFrom(index_offset or 0, index_snapshot)
                )
            state, replayed = rebuild_producer_state(
                self._segments, f"{self.topic}-{self.partition}", start, index_start
            )
            self._producer_state = state
            ongoing = state.ongoing_transactions()
            _log.log(
                logging.INFO if ongoing else logging.DEBUG,
                "producer_state.rebuilt",
                topic=self.topic,
                partition=self.partition,
                snapshot_offset=snapshot_offset,
                replay_from=start.offset,
                index_replay_from=None if index_start is None else index_start.offset,
                replayed_batches=replayed,
                producers=len(state.active_producers()),
                open_transactions=len(ongoing),
                first_unstable_offset=state.first_unstable_offset(),
            )
        return state

    def _txn_index_rebuild_from(self) -> int:
        """The base of the first segment whose aborted-transaction index must be rebuilt or was lost (a closed
        segment always has a ``.txnindex`` file, maybe empty), which only a replay of that whole segment can
        write; the log end when there is none."""
        last = self._segments[-1]
        return next(
            (
                s.base_offset
                for s in self._segments
                if not s.txn_index_trusted or (s is not last and not s.txn_index.exists)
            ),
            self.log_end_offset,
        )

    def _latest_snapshot(self, limit: int) -> tuple[int | None, ProducerStateManager | None]:
        """The latest snapshot a replay may start from, with its offset: above the log start (Kafka's
        truncateAndReload deletes the others: they describe producers whose batches may all be gone), at or below
        the log end and ``limit`` (see :meth:`_txn_index_rebuild_from`). A damaged one is quarantined and the next
        older one tried; (None, None) when none is left."""
        for offset in reversed(list_snapshots(self.directory)):
            if not self.log_start_offset < offset <= min(limit, self.log_end_offset):
                continue
            path = snapshot_path(self.directory, offset)
            try:
                return offset, decode_snapshot(path.read_bytes(), f"{self.topic}-{self.partition}")
            except SnapshotError as exc:
                self._quarantine(path.name, f"producer state snapshot: {exc}")
        return None, None

    def _write_snapshot(self, offset: int) -> None:
        """Snapshot the producer state (every batch below ``offset`` applied). Only an optimisation of the next
        start, so a failed write is one warning and the next start replays more."""
        state = self._producers()
        try:
            write_snapshot(self.directory, offset, state)
        except OSError as exc:
            _log.warning(
                "producer_snapshot.write_failed",
                topic=self.topic,
                partition=self.partition,
                offset=offset,
                **os_error_fields(exc),
            )
            return
        _log.debug(
            "producer_snapshot.written",
            topic=self.topic,
            partition=self.partition,
            offset=offset,
            producers=len(state.entries()),
        )

    def _delete_snapshots(self, keep: Callable[[int], bool], reason: str) -> None:
        """Delete the snapshots whose offset ``keep`` refuses: they describe offsets the log no longer has."""
        for offset in list_snapshots(self.directory):
            if not keep(offset):
                snapshot_path(self.directory, offset).unlink(missing_ok=True)
                _log.info(
                    "producer_snapshot.deleted",
                    topic=self.topic,
                    partition=self.partition,
                    offset=offset,
                    reason=reason,
                )

    def _note_transactions(
        self, started: list[tuple[int, int]], completed: list[CompletedTxn], segment: LogSegment
    ) -> None:
        """Index the aborted transactions an append's markers closed (in the segment holding the markers)."""
        for producer_id, first_offset in started:
            _log.debug(
                "txn.started",
                topic=self.topic,
                partition=self.partition,
                producer_id=producer_id,
                first_offset=first_offset,
            )
        for txn in completed:
            if txn.is_aborted:
                segment.txn_index.append(aborted_entry(txn))
            _log.debug(
                "txn.completed",
                topic=self.topic,
                partition=self.partition,
                producer_id=txn.producer_id,
                first_offset=txn.first_offset,
                marker_offset=txn.last_offset,
                result="ABORT" if txn.is_aborted else "COMMIT",
                last_stable_offset=txn.last_stable_offset,
            )

    # --- log start and leader epochs ---------------------------------------------------------------------------

    @_locked
    @_storage_errors
    def delete_records(self, offset: int) -> int:
        """DeleteRecords (Kafka's ``maybeIncrementLogStartOffset`` for a client's deletion): move the log start to
        ``offset`` and delete the segments wholly below it; returns the new log start (the low watermark).

        ``offset`` may not pass the high watermark (OffsetOutOfRangeError); at or below the log start nothing
        changes. The new log start is written to ``log-start-offset`` (atomic, fsynced) before anything else
        changes, so once this returns it survives a crash; segments are deleted after it (a crash in between
        leaves segments that the next open deletes). The epoch cache and the producer snapshots follow it.
        """
        self._check_open()
        if offset < 0 or offset > self.high_watermark:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self.high_watermark)
        if offset <= self.log_start_offset:
            return self.log_start_offset
        self._persist_log_start(offset)
        self._log_start = offset
        _log.info("log_start_offset.moved", topic=self.topic, partition=self.partition, log_start_offset=offset)
        self._delete_below_log_start(self._clock())
        self._epochs.truncate_from_start(self.log_start_offset)
        return self.log_start_offset

    def _persist_log_start(self, offset: int) -> None:
        write_log_start(self.directory / LOG_START_OFFSET_CHECKPOINT, self.topic, self.partition, offset)

    def _delete_below_log_start(self, now_ms: int) -> int:
        """Kafka's ``deleteLogStartOffsetBreachedSegments``: the leading segments whose next segment starts at or
        below the log start hold nothing a reader may ask for (the active segment always stays)."""
        count = 0
        while count + 1 < len(self._bases) and self._bases[count + 1] <= self._log_start:
            count += 1
        return self._delete_leading(count, now_ms, "log start offset")

    @property
    def leader_epoch(self) -> int:
        """The partition's current leader epoch (the cache's latest; 0, a new partition's, while it is empty)."""
        latest = self._epochs.latest_epoch
        return 0 if latest is None else latest

    @_locked
    @_storage_errors
    def become_leader(self, epoch: int) -> None:
        """This broker leads the partition from ``epoch`` on (Kafka's ``maybeAssignEpochStartOffset`` at the log
        end when a replica becomes leader); written to the cache before it returns."""
        self._check_open()
        self._epochs.assign(epoch, self.log_end_offset)

    @_locked
    def epoch_entries(self) -> list[EpochEntry]:
        """The epoch cache, oldest first (for tools and tests)."""
        return self._epochs.entries()

    @_locked
    def epoch_for_offset(self, offset: int) -> int | None:
        """The leader epoch that wrote ``offset`` (None below every entry)."""
        return self._epochs.epoch_for_offset(offset)

    @_locked
    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (the largest epoch <= ``epoch``, where it ended); see
        :meth:`LeaderEpochCache.end_offset_for`."""
        self._check_open()
        return self._epochs.end_offset_for(epoch, self.log_end_offset)

    # --- transactions -----------------------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        """What every replica has: on a single broker, everything appended (the log end offset)."""
        return self.log_end_offset

    @_locked
    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction, None when none is open."""
        self._check_open()
        return self._producers().first_unstable_offset()

    @_locked
    def last_stable_offset(self) -> int:
        """Kafka's LSO (T41): the first unstable offset when it is below the high watermark, else the high
        watermark; never below the log start (a transaction whose first batch retention deleted holds it there)."""
        first = self.first_unstable_offset()
        high_watermark = self.high_watermark
        if first is None or first >= high_watermark:
            return high_watermark
        return max(first, self.log_start_offset)

    @_locked
    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer, at this epoch, has a transaction open on this partition."""
        self._check_open()
        return self._producers().has_ongoing_transaction(producer_id, producer_epoch)

    @_locked
    def active_producers(self) -> list[ProducerSummary]:
        """The producers this partition keeps state for (DescribeProducers), by producer id."""
        self._check_open()
        return self._producers().active_producers()

    @_locked
    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping ``[fetch_offset, upper_bound)`` (T42), from the segment holding
        ``fetch_offset`` on."""
        self._check_open()
        self._producers()  # the indexes that could not be trusted are rebuilt by the replay
        i = max(0, bisect.bisect_right(self._bases, fetch_offset) - 1)
        return collect_aborted(self._segments[i:], fetch_offset, upper_bound)

    @_locked
    def roll(self, *, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the log end (a no-op when the active segment is empty)."""
        self._check_open()
        return self._roll(self._now(now_ms))

    def _roll(self, now_ms: int) -> LogSegment:
        old = self._segments[-1]
        if old.size == 0:
            return old
        old.seal()
        old.write_indexes()
        old.txn_index.ensure_file()
        # Only once the new segment exists does the old one stop being active: a roll that fails (disk full)
        # leaves the list as it was, and the next append simply tries to roll again.
        segment = self._create_segment(self.log_end_offset, now_ms)
        self._flush_pending.append(old)
        self._add(segment)
        self._write_snapshot(segment.base_offset)  # Kafka snapshots at every roll: the next start replays from here
        return segment

    def _create_segment(self, base_offset: int, now_ms: int, suffix: str = "") -> LogSegment:
        self._dir_dirty = True
        segment = LogSegment.create(self._spec(base_offset, now_ms, suffix))
        segment.on_damage = self._on_damage
        return segment

    def _add(self, segment: LogSegment) -> None:
        self._segments.append(segment)
        self._bases.append(segment.base_offset)

    def _reindex(self) -> None:
        self._bases = [segment.base_offset for segment in self._segments]

    # --- durability -------------------------------------------------------------------------------------------

    @_locked
    @_storage_errors
    def flush(self) -> None:
        """fsync everything appended so far (rolled segments with their indexes, the active segment's data, and
        the directory if files were created), then advance the recovery point to the log end.

        The active segment's index files are not fsynced: recovery always rebuilds them from the data.
        """
        self._check_open()
        for segment in self._flush_pending:
            if not segment.closed:
                segment.flush()
                segment.release()
        self._flush_pending.clear()
        self._segments[-1].flush_data()
        if self._dir_dirty:
            fsync_dir(self.directory)
            self._dir_dirty = False
        self.recovery_point = self.log_end_offset
        self._unflushed_records = 0

    @_locked
    def flush_if_due(self, now_ms: int) -> bool:
        """Kafka's ``flush.ms``: flush when the last periodic flush is at least that old; True if it flushed."""
        flush_ms = self._config.flush_ms
        if flush_ms >= INT64_MAX or now_ms - self._last_flush_ms < flush_ms:
            return False
        self._last_flush_ms = now_ms
        if not self.has_unflushed:
            return False
        self.flush()
        return True

    # --- reading ----------------------------------------------------------------------------------------------

    def _check_range(self, offset: int) -> None:
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, self.log_end_offset)

    @_locked
    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> bytes:
        """Whole batches from the one holding ``fetch_offset``, up to ``max_bytes``, possibly across segments.

        With ``min_one_batch`` (KIP-74, what Fetch does for the first partition of a response) the first batch is
        returned even if larger than ``max_bytes``, so a consumer can never get stuck behind a large batch.
        ``max_offset`` (exclusive) hides batches at or beyond it, e.g. a high watermark. The first batch may start
        before ``fetch_offset``; consumers skip the records below it, as with Kafka.
        """
        ranges, _ = self._ranges(fetch_offset, max_bytes, max_offset, min_one_batch)
        return b"".join(segment.read(start, length) for segment, start, length in ranges)

    @_locked
    def read_slices(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> list[SegmentSlice]:
        """What `read` would return, as byte ranges of the segment files instead of bytes: for Fetch responses
        streamed to the socket in chunks rather than held in memory whole.

        Each slice holds its own duplicate of the segment's descriptor, taken under the log's lock, so the bytes
        stay readable even if retention or the cleaner replaces or deletes the segment meanwhile (Kafka's readers
        keep the old file open in the same way). The caller closes them (`SegmentSlice.close`).
        """
        ranges, _ = self._ranges(fetch_offset, max_bytes, max_offset, min_one_batch)
        return self._open_slices(ranges)

    @staticmethod
    def _open_slices(ranges: list[tuple[LogSegment, int, int]]) -> list[SegmentSlice]:
        slices: list[SegmentSlice] = []
        try:
            for segment, start, length in ranges:
                slices.append(SegmentSlice(segment.open_reader(), start, length))
        except BaseException:
            for piece in slices:  # e.g. EMFILE on a later dup: the earlier descriptors must not leak
                piece.close()
            raise
        return slices

    @_locked
    def read_committed(self, fetch_offset: int, max_bytes: int, *, min_one_batch: bool = True) -> CommittedRead:
        """A read_committed Fetch (T42): `read_slices` up to the last stable offset, with the aborted transactions
        overlapping what it returns (Kafka bounds them by the offset after the returned batches)."""
        lso = self.last_stable_offset()
        ranges, end_offset = self._ranges(fetch_offset, max_bytes, lso, min_one_batch)
        aborted = self.aborted_transactions(fetch_offset, end_offset) if ranges else []
        return CommittedRead(self._open_slices(ranges), aborted, lso)

    def _ranges(
        self, fetch_offset: int, max_bytes: int, max_offset: int | None, min_one_batch: bool
    ) -> tuple[list[tuple[LogSegment, int, int]], int]:
        """The byte ranges a read returns, and the offset after the last batch in them (``fetch_offset`` when
        there is none): the upper bound of the aborted transactions a read_committed Fetch lists."""
        self._check_open()
        self._check_range(fetch_offset)
        limit = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        if fetch_offset >= limit:
            return [], fetch_offset
        parts: list[tuple[LogSegment, int, int]] = []
        end_offset = fetch_offset
        budget = max_bytes
        first = min_one_batch
        offset = fetch_offset
        i = max(0, bisect.bisect_right(self._bases, offset) - 1)
        while i < len(self._segments) and (budget > 0 or first):
            segment = self._segments[i]
            found = segment.find(offset)
            if found is None:
                i += 1
                continue
            start, header = found
            if header.last_offset >= limit:
                break
            end = segment.size
            limited = False
            if limit < segment.next_offset:
                stop = segment.find(limit)
                if stop is not None:
                    end, limited = stop[0], True
            damage = segment.next_damage(start)
            if damage is not None and damage < end:
                end, limited = damage, False  # stop at damaged bytes, then go on after them
            if end - start > budget:
                cut = segment.last_boundary_before(start + max(budget, 0), start)
                if cut == start and first:
                    cut = start + header.size
                if cut > start:
                    valid, next_offset = segment.proven_prefix(start, cut - start)
                    if not valid:
                        self._check_skipped(segment, start)
                        continue  # the first batch was damaged: it is skipped from now on, look again
                    parts.append((segment, start, valid))
                    end_offset = next_offset
                break
            valid, next_offset = segment.proven_prefix(start, end - start)
            if not valid:
                self._check_skipped(segment, start)
                continue  # as above
            parts.append((segment, start, valid))
            end_offset = next_offset
            budget -= valid
            first = False
            if valid < end - start or damage == end:
                offset = next_offset  # damage follows: find() resumes at the next valid batch
                continue
            if limited:
                break
            offset = segment.next_offset
            i += 1
        return parts, end_offset

    @staticmethod
    def _check_skipped(segment: LogSegment, start: int) -> None:
        """After a read found the batch at ``start`` damaged, the segment must now skip it; otherwise the caller
        would look again forever (with the log's lock held, on the event loop)."""
        if segment.skip_damage(start) == start:
            raise CorruptLogError(f"{segment.log_path} at {start}: a damaged batch that readers cannot skip")

    def iter_batches_from(self, offset: int | None = None, *, end_offset: int | None = None) -> Iterator[RecordBatch]:
        """Decoded batches from the one holding ``offset`` (default: log start) to ``end_offset`` or the log end.

        For whole-partition replays such as loading ``__consumer_offsets``. The first batch may start before
        ``offset``. Appends made while iterating are included; retention overtaking the iterator raises
        OffsetOutOfRangeError.
        """
        position = self.log_start_offset if offset is None else offset
        while True:
            self._check_open()
            limit = self.log_end_offset if end_offset is None else min(end_offset, self.log_end_offset)
            if position >= limit:
                return
            data = self.read(position, _ITER_CHUNK, max_offset=limit)
            if not data:
                return
            scan = iter_batches(data)
            try:
                for _, batch in scan:
                    yield batch
                    position = batch.next_offset
            except DecodeError as exc:
                # CRC-valid bytes that still do not decode: the same damage as a bad CRC for every reader.
                header = peek_batch_header(data, scan.valid_end)
                self._mark_damaged(header.base_offset, exc.reason)

    @_locked
    def _mark_damaged(self, offset: int, reason: str) -> None:
        i = max(0, bisect.bisect_right(self._bases, offset) - 1)
        found = self._segments[i].find(offset)
        if found is not None:
            position, header = found
            self._segments[i].note_damage(position, position + header.size, reason)

    @_locked
    def offset_for_timestamp(self, timestamp: int) -> TimestampOffset | None:
        """First record with timestamp >= ``timestamp`` (ListOffsets with a real timestamp), or None."""
        if timestamp < 0:
            raise ValueError(f"timestamp must be >= 0, got {timestamp} (use earliest()/latest() for -2/-1)")
        self._check_open()
        start = self.log_start_offset
        for segment in self._segments:
            if segment.max_timestamp >= timestamp:
                found = segment.find_timestamp(timestamp, start)
                if found is not None:
                    return found
        return None

    @_locked
    def max_timestamp_offset(self) -> TimestampOffset | None:
        """ListOffsets MAX_TIMESTAMP (-3, KIP-734): the first record carrying the largest timestamp."""
        self._check_open()
        best = max(self._segments, key=lambda segment: segment.max_timestamp)
        if best.max_timestamp < 0:
            return None
        return best.find_timestamp(best.max_timestamp, self.log_start_offset)

    # --- retention and truncation -----------------------------------------------------------------------------

    @_locked
    def apply_retention(self, now_ms: int) -> int:
        """Delete whole segments past ``retention.ms`` or beyond ``retention.bytes``; returns how many.

        As in Kafka, only when the cleanup policy includes ``delete``; the active segment goes too once it is
        expired (a fresh empty segment is rolled first, so the log start moves to the log end).
        """
        self._check_open()
        config = self._config
        if not config.delete_enabled:
            return 0
        deleted = 0
        if config.retention_ms >= 0:
            count = 0
            for segment in self._deletable():
                if now_ms - segment.largest_timestamp() <= config.retention_ms:
                    break
                count += 1
            deleted += self._delete_leading(count, now_ms, "retention.ms")
        if config.retention_bytes >= 0:
            excess = self.size_in_bytes - config.retention_bytes
            count = 0
            for segment in self._deletable():
                if excess - segment.size < 0:
                    break
                excess -= segment.size
                count += 1
            deleted += self._delete_leading(count, now_ms, "retention.bytes")
        return deleted

    @_locked
    def delete_segments_before(self, offset: int, *, now_ms: int | None = None) -> int:
        """Delete the leading segments holding only offsets below ``offset``; returns how many."""
        self._check_open()
        count = 0
        for i in range(len(self._deletable())):
            upper = self._bases[i + 1] if i + 1 < len(self._bases) else self.log_end_offset
            if upper > offset:
                break
            count += 1
        return self._delete_leading(count, self._now(now_ms), "delete_segments_before")

    def _deletable(self) -> list[LogSegment]:
        """Segments retention may consider, oldest first: all but an empty active segment."""
        if self._segments[-1].size == 0:
            return self._segments[:-1]
        return list(self._segments)

    def _delete_leading(self, count: int, now_ms: int, reason: str) -> int:
        if count <= 0:
            return 0
        if count >= len(self._segments):
            # Deleting everything: keep an empty active segment at the log end, as Kafka does.
            self._roll(now_ms)
        doomed = self._segments[:count]
        del self._segments[:count]
        self._reindex()
        for segment in doomed:
            segment.delete()
        self._flush_pending = [s for s in self._flush_pending if not s.closed]
        # Kafka deletes the snapshots of the segments it deletes; none below the log start is ever loaded again.
        start = self.log_start_offset
        self._delete_snapshots(lambda snapshot: snapshot >= start, "below the log start")
        self._epochs.truncate_from_start(start)
        _log.info(
            "log_segments_deleted",
            dir=str(self.directory),
            reason=reason,
            segments=count,
            log_start_offset=self.log_start_offset,
        )
        return count

    @_locked
    def truncate_to(self, offset: int) -> None:
        """Remove every batch holding an offset >= ``offset`` (Kafka's truncateTo; a batch straddling it goes).

        Below the log start this empties the log and restarts it at ``offset``.
        """
        self._check_open()
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        if offset >= self.log_end_offset:
            return
        if offset < self.log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return
        deleted = False
        while len(self._segments) > 1 and self._segments[-1].base_offset > offset:
            self._segments.pop().delete()
            deleted = True
        if deleted:
            # Durable before new appends reuse these offsets: a crash must not resurrect them as segments that
            # continue the log (recovery could not tell them from valid data).
            fsync_dir(self.directory)
        self._reindex()
        self._segments[-1].truncate_to(offset)
        self._flush_pending = [s for s in self._flush_pending if not s.closed and s is not self._segments[-1]]
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self._producer_state = None  # markers and batches may be gone: replayed again from what is left
        end = self.log_end_offset
        self._delete_snapshots(lambda snapshot: snapshot <= end, "truncated")
        self._keep_epoch_after_truncation(end)
        if end < self._log_start:
            # A batch straddling the log start went whole: nothing readable is left, restart empty at the log start.
            self.truncate_fully_and_start_at(self._log_start)

    def _keep_epoch_after_truncation(self, end: int) -> None:
        """Drop the epoch entries of the truncated offsets; the leader did not change, so its epoch stays current
        (it starts again at ``end`` when its own entry went with the truncated offsets)."""
        epoch = self.leader_epoch
        self._epochs.truncate_from_end(end)
        if self._epochs.latest_epoch != epoch:
            self._epochs.assign(epoch, end)

    @_locked
    def truncate_fully_and_start_at(self, offset: int, *, now_ms: int | None = None) -> None:
        """Delete every segment and restart the log empty at ``offset`` (log start = log end = offset)."""
        self._check_open()
        for segment in self._segments:
            segment.delete()
        self._segments.clear()
        self._flush_pending.clear()
        self._add(self._create_segment(offset, self._now(now_ms)))
        self._reindex()
        self.recovery_point = offset
        if (self.directory / LOG_START_OFFSET_CHECKPOINT).exists():
            self._persist_log_start(offset)  # it may move back (a truncation below it): the file must follow
        self._log_start = offset
        self._producer_state = None
        self._delete_snapshots(lambda snapshot: False, "truncated fully")
        self._keep_epoch_after_truncation(0)
        self._epochs.truncate_from_start(offset)

    # --- cleaner hooks ----------------------------------------------------------------------------------------

    def new_cleaned_segment(self, base_offset: int, *, now_ms: int | None = None) -> LogSegment:
        """An empty ``<base>.log.cleaned`` segment for a cleaner to fill with ``append_batches``."""
        self._check_open()
        return self._create_segment(base_offset, self._now(now_ms), CLEANED_SUFFIX)

    def replace_segments(self, old: Sequence[LogSegment], new: Sequence[LogSegment]) -> None:
        """Atomically swap a run of closed segments for cleaned ones (Kafka's ``replaceSegments``).

        ``old`` must be consecutive closed segments; each ``new`` segment comes from :meth:`new_cleaned_segment`,
        starts at the base offset of one of the old segments (the first at the first's), and holds only offsets
        below the next new segment's base (the last: below the segment after the run). Steps: fsync the new
        files; rename them ``.cleaned`` -> ``.swap`` (the commit point); delete the old segments; rename
        ``.swap`` -> final. Recovery finishes any ``.swap`` it finds by deleting the old segments whose base
        offsets fall in its range, and discards ``.cleaned`` files, so a crash at any step leaves either the old
        or the new segments, never both overlapping.

        Safe to call from a cleaner thread while the loop thread appends, reads, rolls and applies retention:
        the fsyncs run outside the lock; under it the arguments are checked against the current list (retention
        may have deleted old segments meanwhile: ValueError, nothing swapped), the new files become ``.swap``
        and the list is swapped. Old segments are deleted only once no reader can reach them any more.
        """
        self._check_open()
        if not old or not new:
            raise ValueError("replace_segments needs at least one old and one new segment")
        for segment in new:
            if segment.suffix != CLEANED_SUFFIX or segment.directory != self.directory:
                raise ValueError(f"{segment} was not made by new_cleaned_segment() of this log")
        self._carry_aborted_transactions(old, new)
        for segment in new:
            segment.seal()
            segment.flush()
        with self._lock:
            self._check_open()
            start = self._replacement_start(old, new)
            for segment in new:
                segment.rename_suffix(SWAP_SUFFIX)
            self._segments[start : start + len(old)] = list(new)
            self._reindex()
            doomed = {id(segment) for segment in old}
            self._flush_pending = [s for s in self._flush_pending if id(s) not in doomed and not s.closed]
        fsync_dir(self.directory)
        for segment in old:
            segment.delete()
        with self._lock:
            for segment in new:
                segment.rename_suffix("")
                segment.release()
        fsync_dir(self.directory)

    @_locked
    def _carry_aborted_transactions(self, old: Sequence[LogSegment], new: Sequence[LogSegment]) -> None:
        """Give each new segment the aborted-transaction entries of the old ones whose markers fall in its offsets:
        the cleaner keeps every marker, so every entry still describes a marker in the log."""
        self._producers()  # old indexes that could not be trusted are rebuilt first
        entries = sorted((e for segment in old for e in segment.txn_index.entries), key=lambda e: e.last_offset)
        for j, segment in enumerate(new):
            upper = new[j + 1].base_offset if j + 1 < len(new) else None
            mine = [
                e for e in entries if e.last_offset >= segment.base_offset and (upper is None or e.last_offset < upper)
            ]
            segment.txn_index.replace(mine)
            segment.txn_index.ensure_file()

    def _replacement_start(self, old: Sequence[LogSegment], new: Sequence[LogSegment]) -> int:
        """Index of ``old[0]`` in the segment list after checking that ``new`` may replace ``old``."""
        closed = self._segments[:-1]
        start = next((i for i, segment in enumerate(closed) if segment is old[0]), None)
        if start is None or [id(s) for s in closed[start : start + len(old)]] != [id(s) for s in old]:
            raise ValueError("old segments must be consecutive closed segments of this log")
        upper = self._segments[start + len(old)].base_offset
        old_bases = {segment.base_offset for segment in old}
        if new[0].base_offset != old[0].base_offset:
            raise ValueError("the first new segment must start at the first old segment's base offset")
        for j, segment in enumerate(new):
            bound = new[j + 1].base_offset if j + 1 < len(new) else upper
            if segment.base_offset not in old_bases or segment.next_offset > bound:
                raise ValueError(f"{segment} does not fit the offset range of the segments it replaces")
        return start

    # --- lifecycle --------------------------------------------------------------------------------------------

    @_locked
    def close(self) -> None:
        """Write index files and close descriptors; no fsync (call :meth:`flush` first for a clean shutdown)."""
        if self._closed:
            return
        if self._producer_state is not None:
            self._write_snapshot(self.log_end_offset)  # Kafka's snapshot at shutdown (never replays the log to make it)
        for segment in self._segments:
            segment.close()
        self._closed = True

    def delete(self) -> None:
        """Close the log and remove its directory."""
        self.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(f"log {self.directory.name} is closed")

    # --- loading ----------------------------------------------------------------------------------------------

    def _open_segment(
        self, base: int, now_ms: int, *, recover: bool, suffix: str = "", unflushed_from: int | None = None
    ) -> LogSegment:
        return LogSegment.open(self._spec(base, now_ms, suffix), recover=recover, unflushed_from=unflushed_from)

    def _spec(self, base_offset: int, now_ms: int, suffix: str = "") -> SegmentSpec:
        """The one place a segment's settings come from: this log's directory and topic config."""
        return SegmentSpec(
            self.directory,
            base_offset,
            index_interval_bytes=self._config.index_interval_bytes,
            max_index_bytes=self._config.segment_index_bytes,
            now_ms=now_ms,
            suffix=suffix,
        )

    def _load(self, recovery_point: int | None, now_ms: int) -> None:
        # The directory is listed again only after a step changed it (most loads change nothing).
        names = os.listdir(self.directory)
        changed = False
        for name in names:
            if name.endswith(_DISCARD_SUFFIXES):
                (self.directory / name).unlink(missing_ok=True)
                changed = True
        for name in sorted(names):
            base = parse_segment_name(name, LOG_SUFFIX + SWAP_SUFFIX)
            if base is not None:
                self._complete_swap(base, now_ms)
                changed = True
        if changed:
            names = os.listdir(self.directory)
            changed = False
        for name in sorted(names):
            if _unparsable_segment_name(name) and (self.directory / name).is_file():
                self._quarantine(name, "not a segment file name (<20-digit base offset>.log/.index/.timeindex)")
                changed = True
        if changed:
            names = os.listdir(self.directory)
        bases = sorted(b for name in names if (b := parse_segment_name(name, LOG_SUFFIX)) is not None)
        known = set(bases)
        for name in names:
            for suffix in _INDEX_SUFFIXES:
                base = parse_segment_name(name, suffix)
                if base is not None and base not in known:
                    (self.directory / name).unlink(missing_ok=True)
        point = 0 if recovery_point is None else max(0, recovery_point)
        first_recovered = max(0, bisect.bisect_right(bases, point) - 1)
        for i, base in enumerate(bases):
            is_last = i == len(bases) - 1
            previous = self._segments[-1] if self._segments else None
            if previous is not None and base < previous.next_offset:
                self._quarantine_segment(
                    base,
                    f"base offset {base} is inside {previous.log_path.name} "
                    f"(offsets {previous.base_offset}..{previous.next_offset - 1})",
                )
                continue
            segment = self._open_segment(
                base, now_ms, recover=i >= first_recovered, unflushed_from=point if is_last else None
            )
            if segment.size == 0 and segment.file_bytes and not self._may_cut_to_empty(segment, previous):
                # The scan rewrote the index files: derived data of ours, not evidence.
                segment.index.delete()
                segment.time_index.delete()
                segment.release()
                self._quarantine(segment.log_path.name, "no valid batch in the file")
                continue
            self._adopt(segment, point)
            if not is_last:
                segment.seal()
                segment.write_indexes()
                segment.release()
        if not self._segments:
            self._add(self._create_segment(max(point, bases[-1] if bases else 0), now_ms))
        else:
            # The last segment ends in damaged bytes we keep (or the last file was quarantined and the previous one
            # does), or below offsets the recovery point says were handed out: new appends go to a fresh segment
            # after all of them, never reusing an offset a client may have been given.
            last = self._segments[-1]
            if last.size < last.file_bytes or last.next_offset < point:
                self._add(self._create_segment(max(point, last.next_offset), now_ms))
        self.recovery_point = min(point, self.log_end_offset)
        end = self.log_end_offset
        self._delete_snapshots(lambda snapshot: snapshot <= end, "beyond the log end")
        self._load_epochs()
        self._load_log_start(now_ms)
        start = self.log_start_offset
        # Kafka's truncateAndReload: a snapshot at or below the log start is not loaded, it is deleted.
        self._delete_snapshots(lambda snapshot: snapshot > start, "at or below the log start")

    def _load_log_start(self, now_ms: int) -> None:
        """Restore the log start DeleteRecords moved (``log-start-offset``): a damaged file is quarantined and the
        first segment's base is the log start again (reported, Decision 9). Segments wholly below it (a crash
        after the file was written, before they were deleted) are deleted now; a log start beyond the log end
        (the file outlived data a power loss took) restarts the log empty there, as no offset below it is served."""
        path = self.directory / LOG_START_OFFSET_CHECKPOINT
        try:
            self._log_start = read_log_start(path, self.topic, self.partition) or 0
        except CheckpointError as exc:
            self._quarantine(path.name, f"log start offset checkpoint: {exc}")
            return
        if self._log_start <= self._segments[0].base_offset:
            return
        if self._log_start > self.log_end_offset:
            _log.warning(
                "log_start_offset.beyond_log_end",
                topic=self.topic,
                partition=self.partition,
                log_start_offset=self._log_start,
                log_end_offset=self.log_end_offset,
            )
            self.truncate_fully_and_start_at(self._log_start, now_ms=now_ms)
            return
        self._delete_below_log_start(now_ms)
        self._epochs.truncate_from_start(self.log_start_offset)

    def _load_epochs(self) -> None:
        """Load ``leader-epoch-checkpoint``; without one (a log older than the cache) or with a damaged one
        (quarantined first) rebuild it from the partitionLeaderEpoch of every batch, as Kafka's recovery assigns
        epochs from the batches it reads. An empty result is a new partition's: epoch 0 from the log end."""
        path = self._epochs.path
        name = (self.topic, self.partition)
        if is_empty_file(path):
            # All a power loss may leave of a checkpoint written without fsync (below): nothing was recorded yet.
            path.unlink()
        try:
            loaded = LeaderEpochCache.load(path, name)
        except CheckpointError as exc:
            self._quarantine(path.name, f"leader epoch checkpoint: {exc}")
            loaded = None
        if loaded is not None:
            self._epochs = loaded
            # Entries past the log end describe offsets recovery cut off; one starting at the log end is a leader that
            # has not written yet, and stays.
            self._epochs.truncate_from_end(self.log_end_offset + 1)
            return
        entries: list[EpochEntry] = []
        for segment in self._segments:
            for _, header in segment.iter_headers():
                epoch = header.partition_leader_epoch
                if epoch >= 0 and (not entries or epoch > entries[-1].epoch):
                    entries.append(EpochEntry(epoch, header.base_offset))
            if segment is not self._segments[-1]:
                segment.release()
        rebuilt = bool(entries)
        if not rebuilt:
            entries.append(EpochEntry(0, self.log_end_offset))
        self._epochs = LeaderEpochCache(path, name, entries)
        # A new partition's entry (epoch 0 from the log end) is what this rebuild gives again from the same log, so
        # it is written without fsync: a fresh log.dirs creates 100 coordinator partitions at start, 200 fsyncs.
        self._epochs.flush(durable=rebuilt)
        _log.log(
            logging.INFO if rebuilt else logging.DEBUG,
            "leader_epoch_cache.rebuilt" if rebuilt else "leader_epoch_cache.created",
            topic=self.topic,
            partition=self.partition,
            entries=[(entry.epoch, entry.start_offset) for entry in entries],
        )

    def _may_cut_to_empty(self, segment: LogSegment, previous: LogSegment | None) -> bool:
        """An active segment whose only batch is torn continues the log; any other file without a batch is junk."""
        return segment.torn_at == 0 and (previous is None or segment.base_offset == previous.next_offset)

    def _adopt(self, segment: LogSegment, point: int) -> None:
        """Add an opened segment: cut its unflushed tail, report its damaged ranges, wire it to report more."""
        segment.on_damage = self._on_damage
        flushed = segment.next_offset < point
        truncated = segment.cut_tail()
        self._add(segment)
        if truncated:
            self._dir_dirty = True
            _log.warning(
                "log_recovery_truncated",
                dir=str(self.directory),
                segment=segment.log_path.name,
                bytes_removed=truncated,
                next_offset=segment.next_offset,
                below_recovery_point=flushed,
            )
        for start, end, reason in segment.damaged:
            self._on_damage(segment, start, end, reason)
        if segment.txn_index_damage is not None:
            # Evidence first: the producer-state replay writes a rebuilt index in its place.
            self._quarantine(segment.txn_index.path.name, f"aborted-transaction index: {segment.txn_index_damage}")

    def _quarantine(self, name: str, reason: str) -> None:
        moved = move_to_quarantine(self.directory / name, reason, self._clock())
        self._quarantined.append(moved)
        _log.warning(
            "log_file_quarantined",
            topic=self.topic,
            partition=self.partition,
            file=name,
            moved_to=moved.moved_to,
            reason=reason,
        )

    def _quarantine_segment(self, base: int, reason: str) -> None:
        """Move a segment's log file and its index files (which describe it) to the quarantine folder."""
        name = segment_name(base)
        self._quarantine(f"{name}{LOG_SUFFIX}", reason)
        for kind in _INDEX_SUFFIXES:
            if (self.directory / f"{name}{kind}").exists():
                self._quarantine(f"{name}{kind}", f"index of quarantined {name}{LOG_SUFFIX}")

    def _delete_files(self, base: int, suffix: str = "") -> None:
        name = segment_name(base)
        for kind in (LOG_SUFFIX, *_INDEX_SUFFIXES):
            (self.directory / f"{name}{kind}{suffix}").unlink(missing_ok=True)

    def _complete_swap(self, base: int, now_ms: int) -> None:
        """Finish a replace_segments interrupted after its commit point (see :meth:`replace_segments`)."""
        swap = self._open_segment(base, now_ms, recover=True, suffix=SWAP_SUFFIX)
        end = swap.next_offset
        for name in os.listdir(self.directory):
            old = parse_segment_name(name, LOG_SUFFIX)
            if old is not None and (old == base or base <= old < end):
                self._delete_files(old)
        swap.rename_suffix("")
        swap.close()
        _log.info("log_swap_completed", dir=str(self.directory), segment=swap.log_path.name)
