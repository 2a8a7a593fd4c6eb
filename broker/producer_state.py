"""Idempotent-producer state: producer ids, epochs and sequence numbers, checked the way Kafka checks them.

kafka-python and librdkafka producers are idempotent by default, so every Produce from them carries a producer id,
epoch and base sequence. Per partition we keep, for each producer, its epoch and the last five batches it wrote;
a retried batch is recognised and answered with its original offset instead of being written twice, a gap in the
sequence is OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch is INVALID_PRODUCER_EPOCH (`ProducerStateManager` /
`ProducerAppendInfo.checkSequence`). The state is rebuilt from the batch headers in the log (`from_log`, the first
time a partition is produced to), so it survives a restart like the data does.
"""

from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from protocol.records import BatchHeader
    from storage.partition_log import PartitionLog

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
INT32_MAX = 2**31 - 1
BATCHES_REMEMBERED = 5  # Kafka's ProducerStateEntry.NumBatchesToRetain, also max.in.flight for idempotence
ID_BLOCK_SIZE = 1000


@dataclass(slots=True)
class _Batch:
    first_seq: int
    last_seq: int
    base_offset: int


@dataclass(slots=True)
class _Producer:
    epoch: int
    batches: deque[_Batch] = field(default_factory=lambda: deque(maxlen=BATCHES_REMEMBERED))

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


@dataclass(frozen=True, slots=True)
class SequenceCheck:
    """NONE to append; NONE with `duplicate_of` set for a retried batch; otherwise the error for the partition."""

    error: ErrorCode = ErrorCode.NONE
    duplicate_of: int | None = None


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def last_sequence(base_seq: int, last_offset_delta: int) -> int:
    """Sequences wrap at Int32.MAX like Kafka's `DefaultRecordBatch.incrementSequence`."""
    return (base_seq + last_offset_delta) % (INT32_MAX + 1)


class PartitionProducers:
    """Producer state of one partition."""

    def __init__(self) -> None:
        self._producers: dict[int, _Producer] = {}

    @classmethod
    def from_log(cls, partition_log: PartitionLog) -> PartitionProducers:
        """Replay the producer fields of every batch header in the log (headers only, no records are read).

        Kafka bounds this work with producer-state snapshots; here it is one scan per partition and process.
        """
        state = cls()

        def replay(header: BatchHeader) -> None:
            if header.producer_id != NO_PRODUCER_ID and not header.is_control:
                state.record(
                    header.producer_id,
                    header.producer_epoch,
                    header.base_sequence,
                    header.last_offset_delta,
                    header.base_offset,
                )

        partition_log.visit_headers(replay)
        return state

    def check(self, producer_id: int, epoch: int, base_seq: int, last_offset_delta: int) -> SequenceCheck:
        if producer_id == NO_PRODUCER_ID:
            return SequenceCheck()
        entry = self._producers.get(producer_id)
        if entry is None:
            return SequenceCheck()  # unknown producer (new, or its state aged out): any sequence is accepted
        if epoch < entry.epoch:
            return SequenceCheck(ErrorCode.INVALID_PRODUCER_EPOCH)
        last_seq = last_sequence(base_seq, last_offset_delta)
        if epoch == entry.epoch:
            for batch in entry.batches:
                if batch.first_seq == base_seq and batch.last_seq == last_seq:
                    return SequenceCheck(duplicate_of=batch.base_offset)
            if entry.batches and not _in_sequence(entry.last_seq, base_seq):
                return SequenceCheck(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
        elif base_seq != 0:
            return SequenceCheck(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)  # a new epoch starts at sequence 0
        return SequenceCheck()

    def record(self, producer_id: int, epoch: int, base_seq: int, last_offset_delta: int, base_offset: int) -> None:
        if producer_id == NO_PRODUCER_ID:
            return
        entry = self._producers.get(producer_id)
        if entry is None or epoch != entry.epoch:
            entry = self._producers[producer_id] = _Producer(epoch)
        entry.batches.append(_Batch(base_seq, last_sequence(base_seq, last_offset_delta), base_offset))


class ProducerIdAllocator:
    """Hands out producer ids that stay unique across restarts: blocks are reserved on disk before use."""

    def __init__(self, path: Path) -> None:
        self._path = path
        reserved = int(path.read_text()) if path.exists() else 0
        self._next = reserved
        self._limit = reserved

    def allocate(self) -> int:
        if self._next >= self._limit:
            self._limit = self._next + ID_BLOCK_SIZE
            temp = self._path.with_suffix(".tmp")
            temp.write_text(str(self._limit))
            with temp.open("rb") as handle:
                os.fsync(handle.fileno())
            temp.replace(self._path)
        producer_id = self._next
        self._next += 1
        return producer_id
