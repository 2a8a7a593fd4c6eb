"""Write broker log directories from scenarios, byte for byte in the broker's formats (pure Python, no Spark).

Tests need logs whose every answer is known in advance (a status per partition, a pause around a rebalance), and
the benchmark needs a million commits; both come from here. Everything is encoded with the project's codecs:
record batches by :mod:`protocol.records`, ``__consumer_offsets`` keys/values by :mod:`protocol.consumer_offsets`
(OffsetCommitValue v3, GroupMetadataValue v3, as the coordinator writes them), consumer-protocol blobs by
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
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import Record, RecordBatch, encode_batch
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
        if self.torn:
            raise RuntimeError("finish the torn batch first")
        encoded = encode_batch(batch)
        if self.segment_size and self.segment_size + len(self.pending) + len(encoded) > self.segment_bytes:
            self.flush()
            self.segment_base = batch.base_offset
            self.segment_size = 0
            self._touch()
        self.pending += encoded
        self.next_offset = batch.next_offset
        return batch.base_offset, batch.last_offset

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

    def _append_offsets(self, group: str, records: Sequence[tuple[bytes, bytes | None]], ts_ms: int) -> int:
        writer = self._writer(OFFSETS_TOPIC, self.offsets_partition(group))
        batch = RecordBatch.from_records(
            [Record(offset_delta=i, timestamp_delta=0, key=k, value=v) for i, (k, v) in enumerate(records)],
            base_offset=writer.next_offset,
            base_timestamp=ts_ms,
        )
        return writer.append(batch)[0]

    def commit(self, group: str, topic: str, partition: int, offset: int, ts_ms: int, metadata: str = "") -> int:
        """One OffsetCommit record in its own batch; returns its offset in ``__consumer_offsets``."""
        return self.commit_many(group, [(topic, partition, offset)], ts_ms, metadata)

    def commit_many(self, group: str, entries: Iterable[tuple[str, int, int]], ts_ms: int, metadata: str = "") -> int:
        """Several partitions committed in one request: one batch, as the coordinator's group commit writes it."""
        records = [
            (
                consumer_offsets.encode_key(OffsetCommitKey(group=group, topic=t, partition=p)),
                consumer_offsets.encode_value(
                    OffsetCommitValue(offset=o, leader_epoch=0, metadata=metadata, commit_timestamp=ts_ms)
                ),
            )
            for t, p, o in entries
        ]
        return self._append_offsets(group, records, ts_ms)

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


def _scan_next_offset(path: Path, base: int) -> int:
    """Next offset after the last complete batch of an existing segment, so a writer can reopen a directory."""
    from protocol.records import iter_batch_headers

    data = path.read_bytes()
    nxt = base
    for _, header in iter_batch_headers(data, verify_crc=False):
        nxt = header.next_offset
    return nxt
