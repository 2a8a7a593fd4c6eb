"""python -m storage.dump: Kafka's kafka-dump-log.sh output, the __consumer_offsets decoder, damaged files."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from protocol import consumer_offsets
from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.control_records import ControlRecordType, EndTxnMarker
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.consumer_protocol_subscription import TopicPartition as OwnedPartitions
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue, MemberMetadata
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import Compression, Record, RecordBatch, encode_batch
from storage.cleaner import CleanerConfig, clean
from storage.config import LogConfig
from storage.dump import format_offsets_record, main
from storage.partition_log import AppendOrigin, PartitionLog
from tests.support.consumer_group_records import consumer_group_record_bytes

NOW = 1_700_000_000_000
REPO = Path(__file__).resolve().parents[2]


def put(log: PartitionLog, pairs: list[tuple[bytes | None, bytes | None]], **batch: object) -> None:
    records = [
        Record(offset_delta=i, timestamp_delta=i, key=k, value=v, headers=[("trace", b"x")] if i == 0 else [])
        for i, (k, v) in enumerate(pairs)
    ]
    data = encode_batch(RecordBatch.from_records(records, base_timestamp=NOW, **batch))  # type: ignore[arg-type]
    log.append(data, now_ms=NOW, origin=AppendOrigin.COORDINATOR, leader_epoch=0)


def commit_key(partition: int) -> bytes:
    return consumer_offsets.encode_key(OffsetCommitKey(group="billing", topic="orders", partition=partition))


def commit_value(offset: int, metadata: str = "") -> bytes | None:
    value = OffsetCommitValue(offset=offset, leader_epoch=3, metadata=metadata, commit_timestamp=NOW)
    return consumer_offsets.encode_value(value)


def group_value() -> bytes | None:
    member = MemberMetadata(
        member_id="m1",
        group_instance_id=None,
        client_id="c1",
        client_host="/127.0.0.1",
        rebalance_timeout=300_000,
        session_timeout=45_000,
        subscription=encode_subscription(
            ConsumerProtocolSubscription(
                topics=["orders"], owned_partitions=[OwnedPartitions(topic="orders", partitions=[1])], user_data=b"\x01"
            )
        ),
        assignment=encode_assignment(
            ConsumerProtocolAssignment(assigned_partitions=[AssignedPartitions(topic="orders", partitions=[0, 1])])
        ),
    )
    value = GroupMetadataValue(
        protocol_type="consumer",
        generation=3,
        protocol="range",
        leader="m1",
        current_state_timestamp=NOW,
        members=[member],
    )
    return consumer_offsets.encode_value(value)


@pytest.fixture
def offsets_dir(tmp_path: Path) -> Path:
    """A __consumer_offsets partition: two commits, a group metadata record and a tombstone."""
    log = PartitionLog(tmp_path / "__consumer_offsets-0", LogConfig(cleanup_policy=("compact",)), now_ms=NOW)
    put(log, [(commit_key(0), commit_value(42, "m")), (commit_key(1), commit_value(7))])
    put(log, [(consumer_offsets.encode_key(GroupMetadataKey(group="billing")), group_value())])
    put(log, [(commit_key(1), None)])
    log.flush()
    log.close()
    return tmp_path / "__consumer_offsets-0"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def masked(text: str) -> str:
    return re.sub(r"crc: \d+", "crc: <crc>", text)


SEGMENT = "00000000000000000000.log"

GOLDEN_OFFSETS = """\
Dumping {dir}/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 \
partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 \
CreateTime: 1700000000001 size: 178 magic: 2 compresscodec: none crc: <crc> isvalid: true
| offset: 0 CreateTime: 1700000000000 keySize: 23 valueSize: 25 sequence: -1 headerKeys: [trace] \
key: offset_commit::group=billing,partition=orders-0 \
payload: offset=42,leaderEpoch=3,metadata=m,commitTimestamp=1700000000000,expireTimestamp=-1
| offset: 1 CreateTime: 1700000000001 keySize: 23 valueSize: 24 sequence: -1 headerKeys: [] \
key: offset_commit::group=billing,partition=orders-1 \
payload: offset=7,leaderEpoch=3,metadata=,commitTimestamp=1700000000000,expireTimestamp=-1
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 \
partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 178 \
CreateTime: 1700000000000 size: 241 magic: 2 compresscodec: none crc: <crc> isvalid: true
| offset: 2 CreateTime: 1700000000000 keySize: 11 valueSize: 152 sequence: -1 headerKeys: [trace] \
key: group_metadata::group=billing \
payload: {{"protocolType":"consumer","generationId":3,"protocol":"range","leader":"m1",\
"currentStateTimestamp":1700000000000,"members":[{{"memberId":"m1","groupInstanceId":null,"clientId":"c1",\
"clientHost":"/127.0.0.1","rebalanceTimeoutMs":300000,"sessionTimeoutMs":45000,\
"subscription":{{"topics":["orders"],"ownedPartitions":{{"orders":[1]}},"generationId":-1,"rackId":null,\
"userData":"01"}},"assignment":{{"partitions":{{"orders":[0,1]}},"userData":null}}}}]}}
baseOffset: 3 lastOffset: 3 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 \
partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 419 \
CreateTime: 1700000000000 size: 99 magic: 2 compresscodec: none crc: <crc> isvalid: true
| offset: 3 CreateTime: 1700000000000 keySize: 23 valueSize: -1 sequence: -1 headerKeys: [trace] \
key: offset_commit::group=billing,partition=orders-1 payload: <DELETE>
"""


def test_offsets_decoder_golden_output(offsets_dir: Path) -> None:
    code, out, err = run(str(offsets_dir), "--offsets-decoder")
    assert (code, err) == (0, "")
    assert masked(out) == GOLDEN_OFFSETS.format(dir=offsets_dir)


def test_batch_lines_only_without_print_data_log(offsets_dir: Path) -> None:
    code, out, _ = run(str(offsets_dir / SEGMENT))
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {offsets_dir / SEGMENT}", "Log starting offset: 0"]
    assert [line.split()[1] for line in lines[2:]] == ["0", "2", "3"]
    assert not any(line.startswith("|") for line in lines)


def test_print_data_log_prints_keys_and_values_as_text(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "orders-0", LogConfig(), now_ms=NOW)
    put(log, [(b"user-1", b"hello"), (None, b"no key"), (b"bin", b"\x00\xff\n"), (b"gone", None)])
    log.close()
    code, out, _ = run(str(tmp_path / "orders-0"), "--print-data-log")
    assert code == 0
    assert out.splitlines()[3:] == [
        "| offset: 0 CreateTime: 1700000000000 keySize: 6 valueSize: 5 sequence: -1 headerKeys: [trace]"
        " key: user-1 payload: hello",
        "| offset: 1 CreateTime: 1700000000001 keySize: -1 valueSize: 6 sequence: -1 headerKeys: [] payload: no key",
        "| offset: 2 CreateTime: 1700000000002 keySize: 3 valueSize: 3 sequence: -1 headerKeys: []"
        " key: bin payload: \\x00\\xff\\x0a",
        "| offset: 3 CreateTime: 1700000000003 keySize: 4 valueSize: -1 sequence: -1 headerKeys: [] key: gone",
    ]


def test_producer_fields_compression_and_log_append_time(tmp_path: Path) -> None:
    log = PartitionLog(tmp_path / "t-0", LogConfig(message_timestamp_type="LogAppendTime"), now_ms=NOW)
    records = [Record(offset_delta=i, timestamp_delta=0, key=b"k", value=b"v") for i in range(3)]
    batch = RecordBatch.from_records(
        records, base_timestamp=5, producer_id=12, producer_epoch=1, base_sequence=40, compression=Compression.LZ4
    )
    log.append(encode_batch(batch), now_ms=NOW + 5)
    log.close()
    code, out, _ = run(str(tmp_path / "t-0" / SEGMENT), "--print-data-log")
    assert code == 0
    batch_line, *records_lines = out.splitlines()[2:]
    assert "baseSequence: 40 lastSequence: 42 producerId: 12 producerEpoch: 1" in batch_line
    assert "LogAppendTime: 1700000000005" in batch_line and "compresscodec: lz4" in batch_line
    assert [line.split()[3:5] + line.split()[9:11] for line in records_lines] == [
        ["LogAppendTime:", "1700000000005", "sequence:", str(40 + i)] for i in range(3)
    ]


def test_cleaned_log_shows_delete_horizon_and_sparse_batches(offsets_dir: Path) -> None:
    log = PartitionLog(offsets_dir, LogConfig(cleanup_policy=("compact",)), now_ms=NOW)
    log.roll(now_ms=NOW)
    clean(log, NOW, config=CleanerConfig(delete_retention_ms=1_000))
    log.close()
    code, out, _ = run(str(offsets_dir), "--offsets-decoder")
    assert code == 0
    cleaned, active = out.split("Dumping ")[1:]
    lines = cleaned.splitlines()
    # Commit 1 was superseded by its tombstone: the first batch keeps its span 0-1 with one record left.
    assert lines[2].startswith("baseOffset: 0 lastOffset: 1 count: 1 ")
    assert "deleteHorizonMs: OptionalLong[1700000001000]" in lines[-2] and lines[-1].endswith("payload: <DELETE>")
    assert active.splitlines()[1:] == ["Log starting offset: 4"]  # the empty active segment


def test_directory_lists_segments_in_offset_order_then_leftovers(offsets_dir: Path) -> None:
    log = PartitionLog(offsets_dir, LogConfig(cleanup_policy=("compact",)), now_ms=NOW)
    log.roll(now_ms=NOW)
    put(log, [(commit_key(0), commit_value(43))])
    log.close()
    (offsets_dir / f"{SEGMENT}.cleaned").write_bytes(b"")
    code, out, _ = run(str(offsets_dir))
    assert code == 0
    dumped = [line.removeprefix(f"Dumping {offsets_dir}/") for line in out.splitlines() if line.startswith("Dumping")]
    assert dumped == [SEGMENT, "00000000000000000004.log", f"{SEGMENT}.cleaned"]


def test_torn_tail_is_reported_not_raised(offsets_dir: Path) -> None:
    segment = offsets_dir / SEGMENT
    data = segment.read_bytes()
    segment.write_bytes(data[:-30])
    code, out, _ = run(str(segment), "--offsets-decoder")
    assert code == 0
    lines = out.splitlines()
    assert lines[-1].startswith(f"Found 69 invalid bytes at the end of {SEGMENT}")
    assert sum(line.startswith("baseOffset") for line in lines) == 2


def test_corrupt_batch_is_printed_invalid(offsets_dir: Path) -> None:
    segment = offsets_dir / SEGMENT
    data = bytearray(segment.read_bytes())
    data[100] ^= 0xFF  # inside the first batch's records
    segment.write_bytes(bytes(data))
    code, out, _ = run(str(segment))
    assert code == 0
    assert [line.endswith("isvalid: false") for line in out.splitlines()[2:]] == [True, False, False]


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    code, out, err = run(str(tmp_path / "nope.log"))
    assert (code, out) == (1, "")
    assert err == f"error: {tmp_path / 'nope.log'}: no such file or directory\n"
    code, _, err = run(str(tmp_path))
    assert code == 1 and "no segment files" in err


def test_offsets_decoder_on_odd_records() -> None:
    assert format_offsets_record(None, b"x") == ("<no key: not a __consumer_offsets record>", None)
    assert format_offsets_record(b"\x00\x09rest", b"x") == ("unknown::version=9", None)
    key, payload = format_offsets_record(commit_key(0), b"\x00")
    assert key == "offset_commit::group=billing,partition=orders-0"
    assert payload is not None and payload.startswith("<undecodable value:")
    non_consumer = GroupMetadataValue(
        protocol_type="connect", members=[MemberMetadata(member_id="w1", subscription=b"\x01", assignment=b"\x02")]
    )
    _, payload = format_offsets_record(
        consumer_offsets.encode_key(GroupMetadataKey(group="g")), consumer_offsets.encode_value(non_consumer)
    )
    assert payload is not None and '"subscription":"01","assignment":"02"' in payload


def test_runs_as_a_module(offsets_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "storage.dump", str(offsets_dir), "--offsets-decoder"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert masked(done.stdout) == GOLDEN_OFFSETS.format(dir=offsets_dir)
    missing = subprocess.run(
        [sys.executable, "-m", "storage.dump", str(offsets_dir / "missing.log")],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1 and "no such file or directory" in missing.stderr


def test_offsets_decoder_prints_consumer_group_records(tmp_path: Path) -> None:
    """KIP-848 records (key versions 3-8) print decoded like the classic ones: the type and ids as the key, the
    value as JSON with Kafka's field names (topic ids in Kafka's base64 form), tombstones as <DELETE>."""
    log = PartitionLog(tmp_path / "__consumer_offsets-0", LogConfig(cleanup_policy=("compact",)), now_ms=NOW)
    for pair in consumer_group_record_bytes():
        put(log, [pair])
    log.flush()
    log.close()
    code, out, err = run(str(tmp_path / "__consumer_offsets-0"), "--offsets-decoder")
    assert (code, err) == (0, "")
    printed = [line.split(" key: ", 1)[1] for line in out.splitlines() if " key: " in line]
    assert printed == [
        'consumer_group_metadata::group=cg payload: {"epoch":3}',
        "consumer_group_partition_metadata::group=cg payload: "
        '{"topics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","topicName":"orders","numPartitions":2,'
        '"partitionMetadata":[]}]}',
        "consumer_group_member_metadata::group=cg,member=m1 payload: "
        '{"instanceId":null,"rackId":null,"clientId":"c1","clientHost":"/127.0.0.1","subscribedTopicNames":["orders"],'
        '"subscribedTopicRegex":null,"rebalanceTimeoutMs":300000,"serverAssignor":"uniform",'
        '"classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range","metadata":"0102"}]}}',
        'consumer_group_target_assignment_metadata::group=cg payload: {"assignmentEpoch":3}',
        "consumer_group_target_assignment_member::group=cg,member=m1 payload: "
        '{"topicPartitions":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0,1]}]}',
        "consumer_group_current_member_assignment::group=cg,member=m1 payload: "
        '{"memberEpoch":3,"previousMemberEpoch":2,"state":0,'
        '"assignedPartitions":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[0]}],'
        '"partitionsPendingRevocation":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":[1]}]}',
        "consumer_group_current_member_assignment::group=cg,member=gone payload: <DELETE>",
    ]


def test_offsets_decoder_reads_kafka_44_member_metadata() -> None:
    """A segment Kafka 4.4.0 wrote (tests/protocol/fixtures): a consumer-protocol member, whose ClassicMemberMetadata
    Kafka writes as a tagged null, and a classic member joined by online migration both print decoded."""
    segment = REPO / "tests" / "protocol" / "fixtures" / "kafka-4.4-consumer-offsets.log"
    code, out, err = run(str(segment), "--offsets-decoder")
    assert (code, err) == (0, "")
    assert "undecodable" not in out
    members = [
        line.split(" payload: ", 1)[1] for line in out.splitlines() if "consumer_group_member_metadata::" in line
    ]
    assert members == [
        '{"instanceId":null,"rackId":null,"clientId":"wire-test","clientHost":"/127.0.0.1",'
        '"subscribedTopicNames":["t-codec"],"subscribedTopicRegex":"","rebalanceTimeoutMs":10000,"serverAssignor":null,'
        '"classicMemberMetadata":null}',
        '{"instanceId":null,"rackId":null,"clientId":"wire-test","clientHost":"/127.0.0.1",'
        '"subscribedTopicNames":["t-codec"],"subscribedTopicRegex":"","rebalanceTimeoutMs":10000,"serverAssignor":null,'
        '"classicMemberMetadata":{"sessionTimeoutMs":10000,"supportedProtocols":[{"name":"range",'
        '"metadata":"0003000000010007742d636f646563ffffffff00000000ffffffffffff"}]}}',
    ]


def transactional_log(directory: Path) -> None:
    """A transactional batch committed (coordinator epoch 9), another aborted (coordinator epoch 9)."""
    log = PartitionLog(directory, LogConfig(), now_ms=NOW)
    put(log, [(b"k", b"v")], producer_id=7, producer_epoch=2, base_sequence=0, is_transactional=True)
    log.append_end_txn_marker(7, 2, EndTxnMarker(ControlRecordType.COMMIT, 9), now_ms=NOW)
    put(log, [(b"k", b"w")], producer_id=7, producer_epoch=2, base_sequence=1, is_transactional=True)
    log.append_end_txn_marker(7, 2, EndTxnMarker(ControlRecordType.ABORT, 9), now_ms=NOW)
    log.close()


def test_control_records_show_their_marker_and_the_transactional_flag(tmp_path: Path) -> None:
    transactional_log(tmp_path / "t-0")
    code, out, _ = run(str(tmp_path / "t-0" / SEGMENT), "--print-data-log")
    assert code == 0
    lines = out.splitlines()[2:]
    batches = [line for line in lines if line.startswith("baseOffset")]
    assert [("isTransactional: true" in b, "isControl: true" in b) for b in batches] == [
        (True, False),
        (True, True),
        (True, False),
        (True, True),
    ]
    markers = [line for line in lines if "endTxnMarker" in line]
    assert [m.split("sequence: -1 headerKeys: [] ")[1] for m in markers] == [
        "endTxnMarker: COMMIT coordinatorEpoch: 9",
        "endTxnMarker: ABORT coordinatorEpoch: 9",
    ]


def test_a_control_record_that_is_no_marker_is_printed_as_unknown(tmp_path: Path) -> None:
    """Kafka's KRaft logs hold other control types (the broker never writes one: the dump reads any file)."""
    record = Record(offset_delta=0, timestamp_delta=0, key=b"\x00\x00\x00\x05", value=b"")
    batch = RecordBatch.from_records([record], base_timestamp=NOW, is_transactional=True, is_control=True)
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / SEGMENT).write_bytes(encode_batch(batch))
    code, out, _ = run(str(tmp_path / "t-0" / SEGMENT), "--print-data-log")
    assert code == 0 and out.splitlines()[-1].endswith("controlType: UNKNOWN(5)")


def test_an_aborted_transaction_index_is_dumped_entry_by_entry(tmp_path: Path) -> None:
    transactional_log(tmp_path / "t-0")
    index = tmp_path / "t-0" / "00000000000000000000.txnindex"
    code, out, _ = run(str(index))
    assert code == 0
    assert out.splitlines() == [
        f"Dumping {index}",
        "version: 0 producerId: 7 firstOffset: 2 lastOffset: 3 lastStableOffset: 4",
    ]
    index.write_bytes(index.read_bytes()[:-1])
    code, out, _ = run(str(index))
    assert code == 0 and out.splitlines()[-1].startswith("Found a damaged index: ")
