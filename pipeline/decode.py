"""Decode segment bytes into columns, with the project's own codecs only.

Record batches go through :mod:`protocol.records`, ``__consumer_offsets`` keys and values through
:mod:`protocol.consumer_offsets`, subscription and assignment blobs through :mod:`protocol.consumer_protocol`.
Nothing here parses bytes itself, so the pipeline reads exactly what the broker writes and a codec fix lands
everywhere at once. Output is columnar (``dict[column, list]``) because the data source turns it straight into an
Arrow batch, and the pure-Python baseline of the benchmark times the very same function.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pipeline.framing import Batch, SkipKind, Skipped, walk
from protocol import consumer_offsets
from protocol.consumer_protocol import decode_assignment, decode_subscription
from protocol.control_records import decode_end_txn_marker
from protocol.errors import DecodeError
from protocol.kafka_uuid import kafka_uuid_to_str
from protocol.messages.consumer_group_current_member_assignment_value import ConsumerGroupCurrentMemberAssignmentValue
from protocol.messages.consumer_group_member_metadata_value import ConsumerGroupMemberMetadataValue
from protocol.messages.consumer_group_metadata_value import ConsumerGroupMetadataValue
from protocol.messages.consumer_group_target_assignment_member_value import ConsumerGroupTargetAssignmentMemberValue
from protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import BatchHeader, RecordBatch, TimestampType, decode_batch

__all__ = [
    "OFFSETS_COLUMNS",
    "SKIPPED",
    "SKIP_COLUMNS",
    "TOMBSTONE_SUFFIX",
    "TOPIC_BATCH_COLUMNS",
    "TXN_ABORT",
    "TXN_COMMIT",
    "decode_offsets_range",
    "topic_batch_columns",
]

#: Where a row is a skipped byte range (:class:`pipeline.framing.Skipped`) instead of data, both tables end with
#: these; null on every data row. Positions are byte offsets in the segment file.
SKIP_COLUMNS = (
    "skip_kind",
    "skip_start",
    "skip_end",
    "skip_batches",
    "skip_records",
    "skip_offsets_from",
    "skip_offsets_to",
    "skip_detail",
)
#: ``record_type`` of a skipped range in the ``__consumer_offsets`` rows.
SKIPPED = "skipped"

#: ``record_type`` of the end-transaction markers (control records) in ``__consumer_offsets``: they carry no group
#: and decide the transactional offset commits of their ``producer_id`` written before them in the partition.
TXN_COMMIT = "txn_commit"
TXN_ABORT = "txn_abort"
#: A KIP-848 consumer-group record's tombstone is its type's name with this suffix (``consumer_group_metadata`` ->
#: ``consumer_group_metadata_tombstone``).
TOMBSTONE_SUFFIX = "_tombstone"

#: Columns of the raw ``__consumer_offsets`` rows, in schema order (see :mod:`pipeline.schemas`). The last two
#: (added after the skip columns, so earlier column positions hold): ``producer_id``, set on the records of
#: transactional batches and on markers, null elsewhere; ``batch_offset``, the base offset of the record's batch
#: (the records of one batch are one write of the coordinator: a KIP-848 epoch bump and the member changes that
#: caused it, say).
OFFSETS_COLUMNS = (
    "log_partition",
    "segment_base",
    "log_offset",
    "log_ts_ms",
    "record_type",
    "group",
    "topic",
    "partition",
    "committed_offset",
    "leader_epoch",
    "metadata",
    "commit_ts_ms",
    "expire_ts_ms",
    "generation",
    "protocol_type",
    "protocol",
    "leader",
    "state_ts_ms",
    "members",
    "error",
    *SKIP_COLUMNS,
    "producer_id",
    "batch_offset",
)

TOPIC_BATCH_COLUMNS = (
    "topic",
    "partition",
    "segment_base",
    "base_offset",
    "last_offset",
    "record_count",
    "first_ts_ms",
    "max_ts_ms",
    "log_append_time",
    "is_transactional",
    "is_control",
    *SKIP_COLUMNS,
)

_KEY_CACHE_LIMIT = 200_000
#: Placeholders for the columns after ``record_type`` that a record type leaves empty.
_NO_COMMIT = (None,) * 5
_NO_METADATA = (None,) * 6
_NOTHING = (None,) * 14
_NO_BATCH = (None,) * 8

Row = tuple[Any, ...]


def _columns(rows: list[Row], names: tuple[str, ...], skips: dict[int, Skipped], position: int) -> dict[str, list[Any]]:
    """Rows to columns in one C-speed transpose (cheaper than appending to 20 lists per record); the skip columns,
    null but on the few rows of ``skips`` (by row index), are filled in afterwards. ``position`` is the file
    position of the walked buffer's first byte. A row holds every column of ``names`` but the skip columns."""
    data_names = tuple(name for name in names if name not in SKIP_COLUMNS)
    if rows:
        columns = {name: list(col) for name, col in zip(data_names, zip(*rows, strict=True), strict=True)}
    else:
        columns = {name: [] for name in data_names}
    skip_columns: dict[str, list[Any]] = {name: [None] * len(rows) for name in SKIP_COLUMNS}
    for index, skipped in skips.items():
        values = _skip_values(skipped, position)
        for name, value in zip(SKIP_COLUMNS, values, strict=True):
            skip_columns[name][index] = value
    return {name: columns[name] if name in columns else skip_columns[name] for name in names}


def _skip_values(s: Skipped, position: int) -> tuple[Any, ...]:
    return (
        s.kind.value,
        position + s.start,
        position + s.end,
        s.batches,
        s.records,
        s.offsets_from,
        s.offsets_to,
        s.detail,
    )


def _member_row(member: MemberMetadata, protocol_type: str) -> dict[str, Any]:
    """A member as a struct row; blobs are decoded only for the ``consumer`` protocol, whose layout is known."""
    topics: list[str] = []
    assignment: list[dict[str, Any]] = []
    if protocol_type == "consumer":
        try:
            if member.subscription:
                topics = list(decode_subscription(member.subscription).topics)
            if member.assignment:
                assignment = [
                    {"topic": tp.topic, "partitions": list(tp.partitions)}
                    for tp in decode_assignment(member.assignment).assigned_partitions
                ]
        except DecodeError:
            pass  # an undecodable blob leaves the member without topics; the record itself is still good
    return {
        "member_id": member.member_id,
        "group_instance_id": member.group_instance_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "session_timeout_ms": member.session_timeout,
        "rebalance_timeout_ms": member.rebalance_timeout,
        "subscribed_topics": topics,
        "assignment": assignment,
    }


def _kip848_members(
    member_id: str | None,
    value: ConsumerGroupMemberMetadataValue | None,
    assignment: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]] | None:
    """The one member a KIP-848 member record is about, as the ``members`` struct of the classic records (None for
    a group-level record). Assigned topics are topic ids (:func:`protocol.kafka_uuid.kafka_uuid_to_str`) here:
    the log has no names for them, :mod:`pipeline.consumer_groups` names them from the topic catalogue."""
    if member_id is None:
        return None
    return [
        {
            "member_id": member_id,
            "group_instance_id": value.instance_id if value else None,
            "client_id": value.client_id if value else None,
            "client_host": value.client_host if value else None,
            "session_timeout_ms": None,
            "rebalance_timeout_ms": value.rebalance_timeout_ms if value else None,
            "subscribed_topics": list(value.subscribed_topic_names) if value else [],
            "assignment": assignment or [],
        }
    ]


def _topic_ids(partitions: Any) -> list[dict[str, Any]]:
    return [{"topic": kafka_uuid_to_str(tp.topic_id), "partitions": list(tp.partitions)} for tp in partitions]


def _consumer_group_fields(member_id: str | None, value: Any) -> tuple[int | None, list[dict[str, Any]] | None]:
    """``generation`` and ``members`` of a KIP-848 record: the group epoch (ConsumerGroupMetadata), the assignment
    epoch (TargetAssignmentMetadata) or the member epoch with its assignment (CurrentMemberAssignment); the member
    itself (MemberMetadata) or its target assignment (TargetAssignmentMember). PartitionMetadata has neither."""
    if isinstance(value, ConsumerGroupMetadataValue):
        return value.epoch, None
    if isinstance(value, ConsumerGroupTargetAssignmentMetadataValue):
        return value.assignment_epoch, None
    if isinstance(value, ConsumerGroupMemberMetadataValue):
        return None, _kip848_members(member_id, value)
    if isinstance(value, ConsumerGroupCurrentMemberAssignmentValue):
        return value.member_epoch, _kip848_members(member_id, None, _topic_ids(value.assigned_partitions))
    if isinstance(value, ConsumerGroupTargetAssignmentMemberValue):
        return None, _kip848_members(member_id, None, _topic_ids(value.topic_partitions))
    return None, None


class _OffsetsDecoder:
    """Turns records into rows; remembers decoded keys, which repeat for every commit of a partition."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.skips: dict[int, Skipped] = {}
        self._keys: dict[bytes, consumer_offsets.OffsetsKey | None] = {}

    def _key(self, key: bytes) -> consumer_offsets.OffsetsKey | None:
        keys = self._keys
        if key in keys:
            return keys[key]
        if len(keys) >= _KEY_CACHE_LIMIT:
            keys.clear()
        decoded = keys[key] = consumer_offsets.decode_key(key)
        return decoded

    def add(
        self,
        fixed: tuple[int, int, int, int],
        key: bytes | None,
        value: bytes | None,
        batch: tuple[int | None, int],
    ) -> None:
        """One record; ``batch`` is its batch's (producer id if transactional else None, base offset)."""
        try:
            if key is None:
                raise DecodeError("record without a key", path="key", offset=0)  # noqa: TRY301
            decoded = self._key(key)
            if isinstance(decoded, OffsetCommitKey):
                rest = self._commit(decoded, value)
            elif isinstance(decoded, GroupMetadataKey):
                rest = self._metadata(decoded, value)
            elif decoded is not None:
                rest = self._consumer_group(decoded, value)
            else:
                rest = ("unknown", *_NOTHING, None)
        except DecodeError as exc:
            rest = ("undecodable", *_NOTHING, str(exc))
        self.rows.append(fixed + rest + batch)

    def marker(self, log_partition: int, segment_base: int, batch: RecordBatch) -> None:
        """The end-transaction marker of a control batch: a row of its own, with no group."""
        rows = self.rows
        for record in batch.records:
            fixed = (log_partition, segment_base, batch.base_offset + record.offset_delta, batch.max_timestamp)
            try:
                kind = TXN_ABORT if decode_end_txn_marker(record).is_abort else TXN_COMMIT
                rows.append((*fixed, kind, *_NOTHING, None, batch.producer_id, batch.base_offset))
            except DecodeError as exc:
                error = f"control record: {exc}"
                rows.append((*fixed, "undecodable", *_NOTHING, error, batch.producer_id, batch.base_offset))

    def skip(self, log_partition: int, segment_base: int, skipped: Skipped) -> None:
        """A skipped range: a row of its own that carries no field of the skipped bytes (no offset, no time)."""
        self.skips[len(self.rows)] = skipped
        self.rows.append((log_partition, segment_base, None, None, SKIPPED, *_NOTHING, None, None, None))

    @staticmethod
    def _commit(key: OffsetCommitKey, value: bytes | None) -> Row:
        decoded = consumer_offsets.decode_value(key, value)
        if decoded is None:
            return ("offset_tombstone", key.group, key.topic, key.partition, *_NO_COMMIT, *_NO_METADATA, None)
        assert isinstance(decoded, OffsetCommitValue)
        return (
            "offset_commit",
            key.group,
            key.topic,
            key.partition,
            decoded.offset,
            decoded.leader_epoch,
            decoded.metadata,
            decoded.commit_timestamp,
            decoded.expire_timestamp,
            *_NO_METADATA,
            None,
        )

    @staticmethod
    def _consumer_group(key: consumer_offsets.ConsumerGroupKey, value: bytes | None) -> Row:
        """A KIP-848 record (:func:`_consumer_group_fields`); a tombstone is its type's name + ``_tombstone``."""
        decoded = consumer_offsets.decode_value(key, value)
        name = consumer_offsets.record_type_of(key).name
        member_id: str | None = getattr(key, "member_id", None)
        if decoded is None:
            record_type, generation, members = name + TOMBSTONE_SUFFIX, None, _kip848_members(member_id, None)
        else:
            record_type = name
            generation, members = _consumer_group_fields(member_id, decoded)
        return (record_type, key.group_id, None, None, *_NO_COMMIT, generation, None, None, None, None, members, None)

    @staticmethod
    def _metadata(key: GroupMetadataKey, value: bytes | None) -> Row:
        decoded = consumer_offsets.decode_value(key, value)
        if decoded is None:
            return ("group_tombstone", key.group, None, None, *_NO_COMMIT, *_NO_METADATA, None)
        assert isinstance(decoded, GroupMetadataValue)
        return (
            "group_metadata",
            key.group,
            None,
            None,
            *_NO_COMMIT,
            decoded.generation,
            decoded.protocol_type,
            decoded.protocol,
            decoded.leader,
            decoded.current_state_timestamp,
            [_member_row(m, decoded.protocol_type) for m in decoded.members],
            None,
        )


def decode_offsets_range(
    data: bytes,
    log_partition: int,
    segment_base: int,
    *,
    position: int = 0,
    tail: SkipKind = SkipKind.TORN_TAIL,
    expected: int | None = None,
    then: int | None = None,
) -> dict[str, list[Any]]:
    """Every record of the valid batches in ``data`` (a slice of one segment starting at file ``position``), and
    one ``skipped`` row per byte range that held none (:mod:`pipeline.framing`: a CRC failure, broken framing,
    garbage, records that do not decode, or ``tail`` for an incomplete batch at the end of ``data``).

    Nothing of a skipped range is used: its row has no offset and no time. A control batch's end-transaction
    marker becomes a ``txn_commit`` / ``txn_abort`` row with its ``producer_id`` and no group (the commits of that
    producer's transaction are decided by it in :mod:`pipeline.transactions`). ``expected`` is the first offset the
    slice may hold, ``then`` the base offset of the valid batch right after it, if known
    (:func:`pipeline.framing.walk`).
    """
    decoder = _OffsetsDecoder()
    view = memoryview(data)
    add = decoder.add
    for item in walk(lambda at, n: bytes(view[at : at + n]), 0, len(data), tail=tail, expected=expected, then=then):
        if isinstance(item, Skipped):
            decoder.skip(log_partition, segment_base, item)
            continue
        header = item.header
        try:
            batch, _ = decode_batch(data, item.position, verify_crc=False)
        except DecodeError as exc:
            detail = f"records of the batch at byte {position + item.position} (offset {header.base_offset}): {exc}"
            records = Skipped(item.position, item.position + header.size, SkipKind.RECORDS, detail)
            decoder.skip(log_partition, segment_base, _trusted(records, header))
            continue
        if batch.is_control:
            decoder.marker(log_partition, segment_base, batch)
            continue
        ts = batch.max_timestamp
        base = batch.base_offset
        of_batch = (batch.producer_id if batch.is_transactional else None, base)
        for record in batch.records:
            add((log_partition, segment_base, base + record.offset_delta, ts), record.key, record.value, of_batch)
    return _columns(decoder.rows, OFFSETS_COLUMNS, decoder.skips, position)


def _trusted(skipped: Skipped, header: BatchHeader) -> Skipped:
    """A batch whose CRC matched: its count and offsets can be believed even though its records cannot be read."""
    return replace(
        skipped,
        batches=1,
        records=header.record_count,
        offsets_from=header.base_offset,
        offsets_to=header.next_offset,
    )


def topic_batch_columns(
    topic: str, partition: int, segment_base: int, items: Iterator[Batch | Skipped]
) -> dict[str, list[Any]]:
    rows: list[Row] = []
    skips: dict[int, Skipped] = {}
    for item in items:
        if isinstance(item, Skipped):
            skips[len(rows)] = item
            rows.append((topic, partition, segment_base, *_NO_BATCH))
            continue
        h = item.header
        rows.append(
            (
                topic,
                partition,
                segment_base,
                h.base_offset,
                h.last_offset,
                h.record_count,
                h.base_timestamp,
                h.max_timestamp,
                h.timestamp_type == TimestampType.LOG_APPEND_TIME,
                h.is_transactional,
                h.is_control,
            )
        )
    return _columns(rows, TOPIC_BATCH_COLUMNS, skips, 0)
