"""The pipeline's ``__consumer_offsets`` decoder on a log that also holds KIP-848 consumer-group records."""

from __future__ import annotations

from pipeline.decode import OFFSETS_COLUMNS, decode_offsets_range
from pipeline.describe_rules import COMMIT_RECORDS, GROUP_RECORDS
from protocol import consumer_offsets
from protocol.messages.group_metadata_key import GroupMetadataKey
from protocol.messages.group_metadata_value import GroupMetadataValue
from protocol.messages.offset_commit_key import OffsetCommitKey
from protocol.messages.offset_commit_value import OffsetCommitValue
from protocol.records import Record, RecordBatch, encode_batch
from tests.support.consumer_group_records import consumer_group_record_bytes

NOW = 1_700_000_000_000


def _batch(pairs: list[tuple[bytes, bytes | None]], base_offset: int) -> bytes:
    records = [Record(offset_delta=i, timestamp_delta=0, key=k, value=v) for i, (k, v) in enumerate(pairs)]
    return encode_batch(RecordBatch.from_records(records, base_offset=base_offset, base_timestamp=NOW))


def test_consumer_group_records_are_rows_of_their_own_with_their_epochs_never_commits_or_classic_generations() -> None:
    classic = [
        (
            consumer_offsets.encode_key(OffsetCommitKey(group="g", topic="t", partition=0)),
            consumer_offsets.encode_value(OffsetCommitValue(offset=5, commit_timestamp=NOW)),
        ),
        (
            consumer_offsets.encode_key(GroupMetadataKey(group="g")),
            consumer_offsets.encode_value(GroupMetadataValue(protocol_type="consumer", generation=1)),
        ),
    ]
    kip848 = consumer_group_record_bytes("cg")
    data = _batch(kip848[:3], 0) + _batch(classic, 3) + _batch(kip848[3:], 5)

    cols = decode_offsets_range(data, 0, 0)

    assert list(cols) == list(OFFSETS_COLUMNS)
    rows = list(
        zip(cols["log_offset"], cols["record_type"], cols["group"], cols["generation"], cols["error"], strict=True)
    )
    assert rows == [
        (0, "consumer_group_metadata", "cg", 3, None),  # the group epoch
        (1, "consumer_group_partition_metadata", "cg", None, None),
        (2, "consumer_group_member_metadata", "cg", None, None),
        (3, "offset_commit", "g", None, None),
        (4, "group_metadata", "g", 1, None),
        (5, "consumer_group_target_assignment_metadata", "cg", 3, None),  # the assignment epoch
        (6, "consumer_group_target_assignment_member", "cg", None, None),
        (7, "consumer_group_current_member_assignment", "cg", 3, None),  # the member epoch
        (8, "consumer_group_current_member_assignment_tombstone", "cg", None, None),
    ]
    kinds = set(cols["record_type"])
    assert len([k for k in cols["record_type"] if k in COMMIT_RECORDS]) == 1
    assert len([k for k in cols["record_type"] if k in GROUP_RECORDS]) == 1
    names = {consumer_offsets.RECORD_TYPES[v].name for v in range(3, 9)}
    assert kinds - {"offset_commit", "group_metadata"} == names | {"consumer_group_current_member_assignment_tombstone"}


def test_a_damaged_consumer_group_value_is_an_undecodable_row() -> None:
    key, _ = consumer_group_record_bytes("cg")[0]
    cols = decode_offsets_range(_batch([(key, b"\x00\x00\x01")], 0), 0, 0)
    assert cols["record_type"] == ["undecodable"]
    assert cols["error"][0]
