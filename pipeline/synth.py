"""Write broker log directories from scenarios, byte for byte in the broker's formats (pure Python, no Spark).

Tests need logs whose every answer is known in advance (a status per partition, a pause around a rebalance), and
the benchmark needs a million commits; both come from here. Everything is encoded with the project's codecs:
record batches by :mod:`protocol.records`, ``__consumer_offsets`` keys/values by :mod:`protocol.consumer_offsets`
(OffsetCommitValue v3, GroupMetadataValue v3, the KIP-848 consumer-group records, as the coordinator writes
them), end-transaction markers by :mod:`protocol.control_records`, consumer-protocol blobs by
:mod:`protocol.consumer_protocol`, the group-to-partition mapping by :mod:`coordinator.hashing`, and the topic
catalogue by :mod:`storage.topics`. Segment files roll at ``segment_bytes`` like the broker's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from coordinator.hashing import partition_for
from protocol import consumer_offsets
from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.control_records import ControlRecordType, EndTxnMarker, encode_end_txn_marker_batch
from protocol.messages.consumer_group_current_member_assignment_key import ConsumerGroupCurrentMemberAssignmentKey
from protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
    TopicPartitions,
)
from protocol.messages.consumer_group_member_metadata_key import ConsumerGroupMemberMetadataKey
from protocol.messages.consumer_group_member_metadata_value import ConsumerGroupMemberMetadataValue
from protocol.messages.consumer_group_metadata_key import ConsumerGroupMetadataKey
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_target_assignment_member_key import ConsumerGroupTargetAssignmentMemberKey
from protocol.messages.consumer_group_target_assignment_member_value import (
    ConsumerGroupTargetAssignmentMemberValue,
)
from protocol.messages.consumer_group_target_assignment_member_value import TopicPartition as TargetPartitions
from protocol.messages.consumer_group_target_assignment_metadata_key import (
    ConsumerGroupTargetAssignmentMetadataKey,
)
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, Record, RecordBatch, encode_batch
from storage.log_manager import TOPICS_FILE
from storage.segment import LOG_SUFFIX, segment_name
from storage.topics import TopicCatalogue, TopicInfo, new_kafka_uuid

__all__ = ["Member", "SyntheticLog"]

OFFSETS_TOPIC = "__consumer_offsets"


@dataclass(frozen=True)
class Member:
    """A group member as GroupMetadataValue stores it; ``assignment`` maps topic -> partitions."""

    member_id: str
    client_id: str = "client"
    client_host: str = "/127.0.0.1"
    assignment: Mapping[str, Sequence[int]] = field(default_factory=dict)
    group_instance_id: str | None = None
    session_timeout_ms: int = 10_000
    rebalance_timeout_ms: int = 30_000

    def metadata(self) -> MemberMetadata:
        subscription = ConsumerProtocolSubscription(topics=sorted(self.assignment))
        assignment = ConsumerProtocolAssignment(
            assigned_partitions=[AssignedPartitions(topic=t, partitions=list(p)) for t, p in self.assignment.items()]
        )
        return MemberMetadata(
            member_id=self.member_id,
            group_instance_id=self.group_instance_id,
            client_id=self.client_id,
            client_host=self.client_host,
            rebalance_timeout=self.rebalance_timeout_ms,
            session_timeout=self.session_timeout_ms,
            subscription=encode_subscription(subscription),
            assignment=encode_assignment(assignment),
        )


class _PartitionWriter:
    """Appends encoded batches to one partition directory, rolling segments like the broker."""

    def __init__(self, directory: Path, start_offset: int, segment_bytes: int) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self.next_offset = start_offset
        self.segment_bytes = segment_bytes
        self.segment_base = start_offset
        self.segment_size = 0
        self.pending = bytearray()
        self.torn: bytes = b""
        self._touch()

    def _path(self) -> Path:
        return self.directory / (segment_name(self.segment_base) + LOG_SUFFIX)

    def _touch(self) -> None:
        self._path().touch()

    def append(self, batch: RecordBatch) -> tuple[int, int]:
        self.append_encoded(encode_batch(batch), batch.base_offset, batch.next_offset)
        return batch.base_offset, batch.last_offset

    def append_encoded(self, encoded: bytes, base_offset: int, next_offset: int) -> None:
        """An already encoded batch (a control batch comes encoded from its codec)."""
        if self.torn:
            raise RuntimeError("finish the torn batch first")
        if self.segment_size and self.segment_size + len(self.pending) + len(encoded) > self.segment_bytes:
            self.flush()
            self.segment_base = base_offset
            self.segment_size = 0
            self._touch()
        self.pending += encoded
        self.next_offset = next_offset

    def flush(self) -> None:
        if self.pending:
            with open(self._path(), "ab") as f:
                f.write(self.pending)
            self.segment_size += len(self.pending)
            self.pending.clear()

    def tear(self, batch: RecordBatch, keep: int) -> None:
        """Write only the first ``keep`` bytes of a batch, as a broker caught mid-append leaves it."""
        self.flush()
        encoded = encode_batch(batch)
        with open(self._path(), "ab") as f:
            f.write(encoded[:keep])
        self.torn = encoded[keep:]
        self.next_offset = batch.next_offset

    def mend(self) -> None:
        with open(self._path(), "ab") as f:
            f.write(self.torn)
        self.segment_size += len(self.torn)
        self.torn = b""


class SyntheticLog:
    """A broker log directory under construction. Call :meth:`flush` (or use it as a context manager) to write."""

    def __init__(self, data_dir: str | Path, *, offsets_partitions: int = 10, segment_bytes: int = 1 << 30) -> None:
        self.root = Path(data_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self.offsets_partitions = offsets_partitions
        self.segment_bytes = segment_bytes
        self._topics: dict[str, TopicInfo] = {}
        self._writers: dict[tuple[str, int], _PartitionWriter] = {}
        #: The members of each KIP-848 group's latest epoch, whose leaving the next epoch writes.
        self._epoch_members: dict[str, list[str]] = {}
        catalogue = TopicCatalogue(self.root / TOPICS_FILE).load()
        self._topics.update(catalogue)
        if OFFSETS_TOPIC not in self._topics:
            self.create_topic(OFFSETS_TOPIC, offsets_partitions)

    def __enter__(self) -> SyntheticLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()

    # --- topics -------------------------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, *, start_offsets: Mapping[int, int] | None = None) -> None:
        """Register a topic; ``start_offsets`` gives a partition's log start (as if retention removed the rest)."""
        self._topics[name] = TopicInfo(name, new_kafka_uuid(), partitions)
        for p in range(partitions):
            self._writer(name, p, (start_offsets or {}).get(p, 0))

    def has_topic(self, name: str) -> bool:
        return name in self._topics

    def _writer(self, topic: str, partition: int, start: int = 0) -> _PartitionWriter:
        key = (topic, partition)
        writer = self._writers.get(key)
        if writer is None:
            directory = self.root / f"{topic}-{partition}"
            existing = sorted(directory.glob("*" + LOG_SUFFIX)) if directory.exists() else []
            writer = _PartitionWriter(directory, start, self.segment_bytes)
            if existing:
                writer.segment_base = int(existing[-1].name[:20])
                writer.segment_size = existing[-1].stat().st_size
                writer.next_offset = _scan_next_offset(existing[-1], writer.segment_base)
            self._writers[key] = writer
        return writer

    def leo(self, topic: str, partition: int) -> int:
        return self._writer(topic, partition).next_offset

    def produce(
        self, topic: str, partition: int, count: int, ts_ms: int, *, control: bool = False, value_bytes: int = 1
    ) -> int:
        """Append one batch of ``count`` records of ``value_bytes`` each, stamped ``ts_ms``; returns the new log-end
        offset."""
        if count <= 0:
            return self.leo(topic, partition)
        writer = self._writer(topic, partition)
        value = b"v" * value_bytes
        records = [Record(offset_delta=i, timestamp_delta=0, key=None, value=value) for i in range(count)]
        batch = RecordBatch.from_records(
            records, base_offset=writer.next_offset, base_timestamp=ts_ms, is_control=control, is_transactional=control
        )
        writer.append(batch)
        return writer.next_offset

    def produce_to(self, topic: str, partition: int, leo: int, ts_ms: int) -> int:
        """Produce just enough to bring the log-end offset to ``leo`` (no-op when already there)."""
        return self.produce(topic, partition, leo - self.leo(topic, partition), ts_ms)

    # --- __consumer_offsets -------------------------------------------------------------------------------------

    def offsets_partition(self, group: str) -> int:
        return partition_for(group, self.offsets_partitions)

    def _append_offsets(
        self, group: str, records: Sequence[tuple[bytes, bytes | None]], ts_ms: int, *, producer_id: int | None = None
    ) -> int:
        """One batch of ``records``; transactional (of ``producer_id``) when one is given, as TxnOffsetCommit
        writes it."""
        writer = self._writer(OFFSETS_TOPIC, self.offsets_partition(group))
        batch = RecordBatch.from_records(
            [Record(offset_delta=i, timestamp_delta=0, key=k, value=v) for i, (k, v) in enumerate(records)],
            base_offset=writer.next_offset,
            base_timestamp=ts_ms,
            producer_id=NO_PRODUCER_ID if producer_id is None else producer_id,
            producer_epoch=NO_PRODUCER_EPOCH if producer_id is None else 0,
            is_transactional=producer_id is not None,
        )
        return writer.append(batch)[0]

    def commit(self, group: str, topic: str, partition: int, offset: int, ts_ms: int, metadata: str = "") -> int:
        """One OffsetCommit record in its own batch; returns its offset in ``__consumer_offsets``."""
        return self.commit_many(group, [(topic, partition, offset)], ts_ms, metadata)

    def commit_many(self, group: str, entries: Iterable[tuple[str, int, int]], ts_ms: int, metadata: str = "") -> int:
        """Several partitions committed in one request: one batch, as the coordinator's group commit writes it."""
        return self._append_offsets(group, _commit_records(group, entries, ts_ms, metadata), ts_ms)

    # --- transactions -------------------------------------------------------------------------------------------

    def txn_commit_many(self, group: str, producer_id: int, entries: Iterable[tuple[str, int, int]], ts_ms: int) -> int:
        """A TxnOffsetCommit: the commits in a transactional batch of ``producer_id``, undecided until
        :meth:`end_txn` writes the marker. Returns the batch's first offset."""
        return self._append_offsets(group, _commit_records(group, entries, ts_ms, ""), ts_ms, producer_id=producer_id)

    def end_txn(self, group: str, producer_id: int, ts_ms: int, *, commit: bool = True) -> int:
        """The COMMIT (or ABORT) marker of the producer's transaction in the group's partition; returns its offset."""
        writer = self._writer(OFFSETS_TOPIC, self.offsets_partition(group))
        offset = writer.next_offset
        marker = EndTxnMarker(ControlRecordType.COMMIT if commit else ControlRecordType.ABORT, coordinator_epoch=0)
        encoded = encode_end_txn_marker_batch(
            marker, producer_id=producer_id, producer_epoch=0, timestamp=ts_ms, base_offset=offset
        )
        writer.append_encoded(encoded, offset, offset + 1)
        return offset

    # --- KIP-848 consumer groups --------------------------------------------------------------------------------

    def consumer_group_epoch(
        self,
        group: str,
        epoch: int,
        members: Sequence[Member],
        ts_ms: int,
        *,
        converged: bool = True,
    ) -> int:
        """A KIP-848 group epoch in one batch, in the coordinator's order: tombstones of the previous epoch's
        members that are not in ``members``, each member's metadata, the group epoch, the target assignment
        (members, then its epoch) and, when the members have already ``converged``, each one's current assignment
        at ``epoch`` (else write those later with :meth:`member_assignment`). Returns the offset of the
        ConsumerGroupMetadata record. Same call shape as :meth:`generation`, so a scenario can write either."""
        records: list[tuple[bytes, bytes | None]] = []
        staying = {m.member_id for m in members}
        for member_id in self._epoch_members.get(group, []):
            if member_id not in staying:
                records += _member_tombstones(group, member_id)
        self._epoch_members[group] = [m.member_id for m in members]
        records += [self._member_metadata(group, m) for m in members]
        epoch_index = len(records)
        records.append(
            (
                consumer_offsets.encode_key(ConsumerGroupMetadataKey(group_id=group)),
                consumer_offsets.encode_value(ConsumerGroupMetadataValue(epoch=epoch)),
            )
        )
        records += [self._target_assignment(group, m) for m in members]
        records.append(
            (
                consumer_offsets.encode_key(ConsumerGroupTargetAssignmentMetadataKey(group_id=group)),
                consumer_offsets.encode_value(ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=epoch)),
            )
        )
        if converged:
            records += [self._current_assignment(group, m, epoch) for m in members]
        return self._append_offsets(group, records, ts_ms) + epoch_index

    def member_assignment(self, group: str, member: Member, member_epoch: int, ts_ms: int) -> int:
        """A member's current assignment reaching ``member_epoch`` (it reconciled after the epoch was written)."""
        return self._append_offsets(group, [self._current_assignment(group, member, member_epoch)], ts_ms)

    def delete_consumer_group(self, group: str, ts_ms: int) -> int:
        """The tombstones the coordinator writes when a KIP-848 group is deleted (its members' first); returns the
        group tombstone's offset."""
        records: list[tuple[bytes, bytes | None]] = []
        for member_id in self._epoch_members.pop(group, []):
            records += _member_tombstones(group, member_id)
        records += [
            (consumer_offsets.encode_key(ConsumerGroupTargetAssignmentMetadataKey(group_id=group)), None),
            (consumer_offsets.encode_key(ConsumerGroupMetadataKey(group_id=group)), None),
        ]
        return self._append_offsets(group, records, ts_ms) + len(records) - 1

    def _member_metadata(self, group: str, m: Member) -> tuple[bytes, bytes | None]:
        value = ConsumerGroupMemberMetadataValue(
            instance_id=m.group_instance_id,
            rack_id=None,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=sorted(m.assignment),
            subscribed_topic_regex=None,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            server_assignor="uniform",
            classic_member_metadata=None,
        )
        key = ConsumerGroupMemberMetadataKey(group_id=group, member_id=m.member_id)
        return consumer_offsets.encode_key(key), consumer_offsets.encode_value(value)

    def _target_assignment(self, group: str, m: Member) -> tuple[bytes, bytes | None]:
        value = ConsumerGroupTargetAssignmentMemberValue(
            topic_partitions=[
                TargetPartitions(topic_id=self._topics[t].topic_id, partitions=list(p)) for t, p in m.assignment.items()
            ]
        )
        key = ConsumerGroupTargetAssignmentMemberKey(group_id=group, member_id=m.member_id)
        return consumer_offsets.encode_key(key), consumer_offsets.encode_value(value)

    def _current_assignment(self, group: str, m: Member, epoch: int) -> tuple[bytes, bytes | None]:
        value = ConsumerGroupCurrentMemberAssignmentValue(
            member_epoch=epoch,
            previous_member_epoch=epoch - 1,
            state=0,
            assigned_partitions=[
                TopicPartitions(topic_id=self._topics[t].topic_id, partitions=list(p)) for t, p in m.assignment.items()
            ],
        )
        key = ConsumerGroupCurrentMemberAssignmentKey(group_id=group, member_id=m.member_id)
        return consumer_offsets.encode_key(key), consumer_offsets.encode_value(value)

    def offset_tombstone(self, group: str, topic: str, partition: int, ts_ms: int) -> int:
        key = consumer_offsets.encode_key(OffsetCommitKey(group=group, topic=topic, partition=partition))
        return self._append_offsets(group, [(key, None)], ts_ms)

    def generation(
        self,
        group: str,
        generation: int,
        members: Sequence[Member],
        ts_ms: int,
        *,
        protocol: str | None = "range",
        leader: str | None = None,
    ) -> int:
        """A GroupMetadataValue v3 record: a completed rebalance, or (no members) the group becoming Empty."""
        value = GroupMetadataValue(
            protocol_type="consumer",
            generation=generation,
            protocol=protocol if members else None,
            leader=(leader or members[0].member_id) if members else None,
            current_state_timestamp=ts_ms,
            members=[m.metadata() for m in members],
        )
        key = consumer_offsets.encode_key(GroupMetadataKey(group=group))
        return self._append_offsets(group, [(key, consumer_offsets.encode_value(value))], ts_ms)

    def group_tombstone(self, group: str, ts_ms: int) -> int:
        key = consumer_offsets.encode_key(GroupMetadataKey(group=group))
        return self._append_offsets(group, [(key, None)], ts_ms)

    def compact_away(self, group: str, count: int) -> None:
        """Skip ``count`` offsets in the group's ``__consumer_offsets`` partition, as records removed by the
        cleaner leave a hole (the pipeline must report the missing history)."""
        self._writer(OFFSETS_TOPIC, self.offsets_partition(group)).next_offset += count

    # --- torn writes and output ---------------------------------------------------------------------------------

    def tear_commit(self, group: str, topic: str, partition: int, offset: int, ts_ms: int, keep: int = 30) -> None:
        """Leave a commit half written at the end of its segment (see :meth:`mend`)."""
        writer = self._writer(OFFSETS_TOPIC, self.offsets_partition(group))
        key = consumer_offsets.encode_key(OffsetCommitKey(group=group, topic=topic, partition=partition))
        value = consumer_offsets.encode_value(OffsetCommitValue(offset=offset, leader_epoch=0, commit_timestamp=ts_ms))
        batch = RecordBatch.from_records(
            [Record(offset_delta=0, timestamp_delta=0, key=key, value=value)],
            base_offset=writer.next_offset,
            base_timestamp=ts_ms,
        )
        self.flush()
        writer.tear(batch, keep)

    def mend(self) -> None:
        """Finish every torn batch, as the broker completing its append does."""
        for writer in self._writers.values():
            if writer.torn:
                writer.mend()

    def flush(self) -> None:
        for writer in self._writers.values():
            writer.flush()
        TopicCatalogue(self.root / TOPICS_FILE).save(self._topics)


def _commit_records(
    group: str, entries: Iterable[tuple[str, int, int]], ts_ms: int, metadata: str
) -> list[tuple[bytes, bytes | None]]:
    return [
        (
            consumer_offsets.encode_key(OffsetCommitKey(group=group, topic=t, partition=p)),
            consumer_offsets.encode_value(
                OffsetCommitValue(offset=o, leader_epoch=0, metadata=metadata, commit_timestamp=ts_ms)
            ),
        )
        for t, p, o in entries
    ]


def _member_tombstones(group: str, member_id: str) -> list[tuple[bytes, bytes | None]]:
    """What the coordinator writes when a member leaves: its current and target assignments, then itself."""
    keys: list[consumer_offsets.ConsumerGroupKey] = [
        ConsumerGroupCurrentMemberAssignmentKey(group_id=group, member_id=member_id),
        ConsumerGroupTargetAssignmentMemberKey(group_id=group, member_id=member_id),
        ConsumerGroupMemberMetadataKey(group_id=group, member_id=member_id),
    ]
    return [(consumer_offsets.encode_key(key), None) for key in keys]


def _scan_next_offset(path: Path, base: int) -> int:
    """Next offset after the last complete batch of an existing segment, so a writer can reopen a directory."""
    from protocol.records import iter_batch_headers

    data = path.read_bytes()
    nxt = base
    for _, header in iter_batch_headers(data, verify_crc=False):
        nxt = header.next_offset
    return nxt
