"""Print the batches of segment files, like Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``).

Usage::

    python -m storage.dump <segment.log | segment.txnindex | partition dir> [--offsets-decoder] [--print-data-log]

One line per batch with the fields Kafka prints (base/last offset, count, producer id/epoch/sequences, leader
epoch, transactional/control flags, delete horizon, position, timestamp, size, magic, codec, CRC and whether it
checks out). ``--print-data-log`` adds one ``|`` line per record with its key and value as text;
``--offsets-decoder`` (which implies it, as in Kafka) decodes ``__consumer_offsets`` records instead:
``offset_commit::group=G,partition=T-P`` keys with every OffsetCommitValue field, ``group_metadata::group=G``
keys with the group and its members as JSON, the consumer protocol's subscription and assignment decoded, and
``<DELETE>`` for tombstones. The records of control batches print as Kafka prints them: ``endTxnMarker: COMMIT
coordinatorEpoch: 9`` for an end-transaction marker, ``controlType: UNKNOWN(5)`` for another type. A ``.txnindex``
file prints one line per aborted transaction (``version: 0 producerId: ... lastStableOffset: ...``), as Kafka
dumps it. KIP-848 consumer-group records (key versions 3-8) print as
``<record type>::group=G[,member=M]`` keys with the value's fields as JSON under Kafka's names. Kafka prints only
the commit offset and metadata; the other fields are what one needs when debugging a coordinator.

The tool reads files the way recovery distrusts them: a batch whose CRC fails is printed with ``isvalid: false``,
and bytes that do not frame a batch (a torn tail after a crash) are reported as ``Found N invalid bytes at the
end of FILE``, never raised. A missing path is an error (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from protocol import consumer_offsets
from protocol.consumer_protocol import decode_assignment, decode_subscription
from protocol.control_records import decode_end_txn_marker
from protocol.declarations import StructDecl
from protocol.errors import DecodeError
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    Record,
    TimestampType,
    peek_batch_header,
    read_batch_records,
    verify_batch_crc,
)
from storage.segment import LOG_SUFFIX, parse_segment_name
from storage.topics import kafka_uuid_to_str
from storage.txn_index import TXN_INDEX_SUFFIX, TransactionIndex

__all__ = ["dump_segment", "dump_txn_index", "format_offsets_record", "main"]

_CHUNK = 1024 * 1024
_CONSUMER_PROTOCOL = "consumer"
_CONTROL_ESCAPES = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F]}


class _Invalid(Exception):
    """Bytes at ``position`` do not frame a batch: the valid data of the file ends there."""

    def __init__(self, position: int, reason: str) -> None:
        super().__init__(reason)
        self.position = position
        self.reason = reason


def _batches(path: Path) -> Iterator[tuple[int, BatchHeader, bytes]]:
    """``(position, header, whole batch)`` for each framed batch of ``path``; _Invalid where framing breaks."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        pos = 0
        while pos < size:
            f.seek(pos)
            head = f.read(BATCH_HEADER_SIZE)
            if len(head) < LOG_OVERHEAD + 5:
                raise _Invalid(pos, "too short for a batch header")
            try:
                header = peek_batch_header(head)
            except DecodeError as exc:
                raise _Invalid(pos, exc.reason) from None
            if pos + header.size > size:
                raise _Invalid(pos, f"batch of {header.size} bytes runs past the end of the file")
            data = head + f.read(header.size - len(head))
            yield pos, header, data
            pos += header.size


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _timestamp_name(header: BatchHeader) -> str:
    return "LogAppendTime" if header.timestamp_type is TimestampType.LOG_APPEND_TIME else "CreateTime"


def _batch_line(position: int, header: BatchHeader, valid: bool) -> str:
    horizon = f"OptionalLong[{header.base_timestamp}]" if header.has_delete_horizon else "OptionalLong.empty"
    return (
        f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} count: {header.record_count}"
        f" baseSequence: {header.base_sequence} lastSequence: {header.last_sequence}"
        f" producerId: {header.producer_id} producerEpoch: {header.producer_epoch}"
        f" partitionLeaderEpoch: {header.partition_leader_epoch}"
        f" isTransactional: {_bool(header.is_transactional)} isControl: {_bool(header.is_control)}"
        f" deleteHorizonMs: {horizon} position: {position} {_timestamp_name(header)}: {header.max_timestamp}"
        f" size: {header.size} magic: {MAGIC} compresscodec: {header.compression.name.lower()}"
        f" crc: {header.crc} isvalid: {_bool(valid)}"
    )


def _record_line(header: BatchHeader, record: Record, offsets_decoder: bool) -> str:
    offset = header.base_offset + record.offset_delta
    if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        timestamp = header.max_timestamp
    else:
        timestamp = header.base_timestamp + record.timestamp_delta
    sequence = -1 if header.base_sequence < 0 else (header.base_sequence + record.offset_delta) % (2**31)
    key_size = -1 if record.key is None else len(record.key)
    value_size = -1 if record.value is None else len(record.value)
    header_keys = ",".join(key for key, _ in record.headers)
    line = (
        f"| offset: {offset} {_timestamp_name(header)}: {timestamp} keySize: {key_size} valueSize: {value_size}"
        f" sequence: {sequence} headerKeys: [{header_keys}]"
    )
    if header.is_control:
        return line + _control_fields(record)
    if offsets_decoder:
        key, payload = format_offsets_record(record.key, record.value)
    else:
        key = None if record.key is None else _text(record.key)
        payload = None if record.value is None else _text(record.value)
    if key is not None:
        line += f" key: {key}"
    if payload is not None:
        line += f" payload: {payload}"
    return line


def _text(data: bytes) -> str:
    """Keys and values as UTF-8 text like Kafka's StringDecoder, but with control characters and invalid bytes
    escaped (``\\x00``) so that binary data cannot garble the terminal or split a record over lines."""
    text = data.decode("utf-8", "backslashreplace")
    return text.translate(_CONTROL_ESCAPES)


def _control_fields(record: Record) -> str:
    """An end-transaction marker as Kafka prints it (key: version, type; value: version, coordinator epoch)."""
    try:
        marker = decode_end_txn_marker(record)
    except DecodeError:
        key = record.key or b""
        kind = int.from_bytes(key[2:4], "big", signed=True) if len(key) >= 4 else -1
        return f" controlType: UNKNOWN({kind})"
    return f" endTxnMarker: {marker.control_type.name} coordinatorEpoch: {marker.coordinator_epoch}"


# --- __consumer_offsets --------------------------------------------------------------------------------------


def format_offsets_record(key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
    """(key text, payload text) of a ``__consumer_offsets`` record, as ``--offsets-decoder`` prints them."""
    if key is None:
        return "<no key: not a __consumer_offsets record>", None
    try:
        decoded_key = consumer_offsets.decode_key(key)
    except DecodeError as exc:
        return f"<undecodable key: {exc}>", None
    if decoded_key is None:
        return f"unknown::version={consumer_offsets.key_version(key)}", None
    if isinstance(decoded_key, OffsetCommitKey):
        key_text = f"offset_commit::group={decoded_key.group},partition={decoded_key.topic}-{decoded_key.partition}"
    elif isinstance(decoded_key, GroupMetadataKey):
        key_text = f"group_metadata::group={decoded_key.group}"
    else:
        key_text = _consumer_group_key_text(decoded_key)
    if value is None:
        return key_text, "<DELETE>"
    try:
        decoded_value = consumer_offsets.decode_value(decoded_key, value)
    except DecodeError as exc:
        return key_text, f"<undecodable value: {exc}>"
    if isinstance(decoded_value, OffsetCommitValue):
        return key_text, _offset_commit_text(decoded_value)
    if isinstance(decoded_value, GroupMetadataValue):
        return key_text, json.dumps(_group_json(decoded_value), separators=(",", ":"))
    assert decoded_value is not None
    struct = consumer_offsets.record_type_of(decoded_key).value.struct
    return key_text, json.dumps(_struct_json(struct, decoded_value), separators=(",", ":"))


def _consumer_group_key_text(key: consumer_offsets.ConsumerGroupKey) -> str:
    """A KIP-848 key: its record type, the group and, for per-member records, the member."""
    text = f"{consumer_offsets.record_type_of(key).name}::group={key.group_id}"
    member_id = getattr(key, "member_id", None)
    return text if member_id is None else f"{text},member={member_id}"


def _struct_json(struct: StructDecl, value: Any) -> dict[str, Any]:
    """A decoded struct with Kafka's field names (first letter lower-cased, as Kafka's JSON converters write them):
    topic ids in Kafka's base64 form, bytes as hex."""
    return {
        f.kafka_name[:1].lower() + f.kafka_name[1:]: _field_json(f.struct, getattr(value, f.name))
        for f in struct.fields
    }


def _field_json(struct: StructDecl | None, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_field_json(struct, item) for item in value]
    if struct is not None:
        return _struct_json(struct, value)
    if isinstance(value, uuid.UUID):
        return kafka_uuid_to_str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def _offset_commit_text(value: OffsetCommitValue) -> str:
    return (
        f"offset={value.offset},leaderEpoch={value.leader_epoch},metadata={value.metadata},"
        f"commitTimestamp={value.commit_timestamp},expireTimestamp={value.expire_timestamp}"
    )


def _group_json(value: GroupMetadataValue) -> dict[str, Any]:
    consumer = value.protocol_type == _CONSUMER_PROTOCOL
    return {
        "protocolType": value.protocol_type,
        "generationId": value.generation,
        "protocol": value.protocol,
        "leader": value.leader,
        "currentStateTimestamp": value.current_state_timestamp,
        "members": [_member_json(member, consumer) for member in value.members],
    }


def _member_json(member: MemberMetadata, consumer: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "memberId": member.member_id,
        "groupInstanceId": member.group_instance_id,
        "clientId": member.client_id,
        "clientHost": member.client_host,
        "rebalanceTimeoutMs": member.rebalance_timeout,
        "sessionTimeoutMs": member.session_timeout,
    }
    if consumer:
        try:
            out["subscription"] = _subscription_json(decode_subscription(member.subscription))
        except DecodeError:
            out["subscription"] = member.subscription.hex()
        try:
            out["assignment"] = _assignment_json(decode_assignment(member.assignment))
        except DecodeError:
            out["assignment"] = member.assignment.hex()
    else:
        # Other protocols (connect, streams' own) are opaque to the broker, as in Kafka's formatter.
        out["subscription"] = member.subscription.hex()
        out["assignment"] = member.assignment.hex()
    return out


def _subscription_json(sub: ConsumerProtocolSubscription) -> dict[str, Any]:
    return {
        "topics": list(sub.topics),
        "ownedPartitions": {tp.topic: list(tp.partitions) for tp in sub.owned_partitions},
        "generationId": sub.generation_id,
        "rackId": sub.rack_id,
        "userData": None if sub.user_data is None else sub.user_data.hex(),
    }


def _assignment_json(assignment: ConsumerProtocolAssignment) -> dict[str, Any]:
    return {
        "partitions": {tp.topic: list(tp.partitions) for tp in assignment.assigned_partitions},
        "userData": None if assignment.user_data is None else assignment.user_data.hex(),
    }


# --- files and the command line -----------------------------------------------------------------------------


def dump_segment(path: Path, out: TextIO, *, print_data: bool = False, offsets_decoder: bool = False) -> int:
    """Print one segment file; returns the number of invalid trailing bytes (0 for a clean file)."""
    print(f"Dumping {path}", file=out)
    base = parse_segment_name(path.name, LOG_SUFFIX)
    if base is None:
        for suffix in (".cleaned", ".swap", ".deleted"):
            if path.name.endswith(LOG_SUFFIX + suffix):
                base = parse_segment_name(path.name[: -len(suffix)], LOG_SUFFIX)
    if base is not None:
        print(f"Log starting offset: {base}", file=out)
    size = path.stat().st_size
    try:
        for position, header, data in _batches(path):
            try:
                verify_batch_crc(data, 0, header)
                valid = True
            except DecodeError:
                valid = False
            print(_batch_line(position, header, valid), file=out)
            if print_data or offsets_decoder:
                _print_records(header, data, out, offsets_decoder)
    except _Invalid as invalid:
        trailing = size - invalid.position
        print(f"Found {trailing} invalid bytes at the end of {path.name} ({invalid.reason})", file=out)
        return trailing
    return 0


def dump_txn_index(path: Path, out: TextIO) -> bool:
    """Print an aborted-transaction index, one line per entry; False (said on the last line) when it is damaged."""
    print(f"Dumping {path}", file=out)
    base = parse_segment_name(path.name, TXN_INDEX_SUFFIX)
    index, damage = TransactionIndex.load(path, 0 if base is None else base)
    for txn in index.entries:
        print(
            f"version: 0 producerId: {txn.producer_id} firstOffset: {txn.first_offset} lastOffset: {txn.last_offset}"
            f" lastStableOffset: {txn.last_stable_offset}",
            file=out,
        )
    if damage is not None:
        print(f"Found a damaged index: {damage}", file=out)
    return damage is None


def _print_records(header: BatchHeader, data: bytes, out: TextIO, offsets_decoder: bool) -> None:
    try:
        records = read_batch_records(data, 0, header)
    except DecodeError as exc:
        print(f"| records could not be decoded: {exc}", file=out)
        return
    for record in records:
        print(_record_line(header, record, offsets_decoder), file=out)


def _segment_files(directory: Path) -> list[Path]:
    """A partition directory's segment files in offset order, leftovers of an interrupted cleaning after them."""
    names = os.listdir(directory)
    logs = sorted(name for name in names if parse_segment_name(name, LOG_SUFFIX) is not None)
    leftovers = sorted(name for name in names if name.endswith((LOG_SUFFIX + ".swap", LOG_SUFFIX + ".cleaned")))
    return [directory / name for name in logs + leftovers]


def build_parser(prog: str = "python -m storage.dump") -> argparse.ArgumentParser:
    """The dump tool's arguments (the README's `dump-log` lines are checked against it)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Print the record batches of Kafka-format segment files.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "path", type=Path, help="a segment .log file, an aborted-transaction .txnindex file, or a partition directory"
    )
    parser.add_argument("--print-data-log", action="store_true", help="print every record's key and value")
    parser.add_argument(
        "--offsets-decoder",
        action="store_true",
        help="decode records as __consumer_offsets keys and values (implies --print-data-log)",
    )
    return parser


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    prog: str = "python -m storage.dump",
) -> int:
    """``prog`` names the command in usage lines (``group-broker dump-log`` hands it over)."""
    stdout = sys.stdout if out is None else out
    stderr = sys.stderr if err is None else err
    args = build_parser(prog).parse_args(argv)
    path: Path = args.path
    if not path.exists():
        print(f"error: {path}: no such file or directory", file=stderr)
        return 1
    if path.is_dir():
        files = _segment_files(path)
        if not files:
            print(f"error: {path}: no segment files (*.log) in this directory", file=stderr)
            return 1
    else:
        files = [path]
    for file in files:
        try:
            if file.name.endswith(TXN_INDEX_SUFFIX):
                dump_txn_index(file, stdout)
                continue
            dump_segment(file, stdout, print_data=args.print_data_log, offsets_decoder=args.offsets_decoder)
        except OSError as exc:
            print(f"error: {file}: {exc.strerror or exc}", file=stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
