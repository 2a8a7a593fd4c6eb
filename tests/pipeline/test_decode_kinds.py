"""KIP-848 consumer-group records and transactional offset commits in the decoded ``__consumer_offsets`` rows,
on logs written by :class:`pipeline.synth.SyntheticLog` (pure Python, no Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.decode import OFFSETS_COLUMNS, decode_offsets_range
from pipeline.synth import OFFSETS_TOPIC, Member, SyntheticLog
from pipeline.topic_ids import topic_names
from protocol.records import Record, RecordBatch, encode_batch


def _rows(data_dir: Path, *names: str) -> list[tuple[Any, ...]]:
    (segment,) = (data_dir / f"{OFFSETS_TOPIC}-0").glob("*.log")
    cols = decode_offsets_range(segment.read_bytes(), 0, 0)
    assert list(cols) == list(OFFSETS_COLUMNS)
    return list(zip(*(cols[n] for n in names), strict=True))


def test_kip848_records_carry_their_epochs_members_and_assigned_topic_ids(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 2)
        epoch_at = log.consumer_group_epoch("g", 5, [Member("m", client_id="c", assignment={"t": [0, 1]})], 1000)
    topic_id = {name: topic_id for topic_id, name in topic_names(str(tmp_path)).items()}["t"]

    rows = _rows(tmp_path, "log_offset", "record_type", "group", "generation", "members")
    (batch_offsets,) = zip(*_rows(tmp_path, "batch_offset"), strict=True)

    member = {
        "member_id": "m",
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "session_timeout_ms": None,
        "rebalance_timeout_ms": 30_000,
        "subscribed_topics": ["t"],
        "assignment": [],
    }
    assigned = {
        **member,
        "client_id": None,
        "client_host": None,
        "rebalance_timeout_ms": None,
        "subscribed_topics": [],
        "assignment": [{"topic": topic_id, "partitions": [0, 1]}],
    }
    assert epoch_at == 1
    assert batch_offsets == (0,) * 5  # one write of the coordinator
    assert rows == [
        (0, "consumer_group_member_metadata", "g", None, [member]),
        (1, "consumer_group_metadata", "g", 5, None),
        (2, "consumer_group_target_assignment_member", "g", None, [assigned]),
        (3, "consumer_group_target_assignment_metadata", "g", 5, None),
        (4, "consumer_group_current_member_assignment", "g", 5, [assigned]),
    ]


def test_kip848_tombstones_name_their_type_and_member(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.consumer_group_epoch("g", 1, [Member("m", assignment={"t": [0]})], 1000)
        deleted_at = log.delete_consumer_group("g", 2000)

    rows = _rows(tmp_path, "log_offset", "record_type", "members")[5:]

    assert deleted_at == 9
    assert [(offset, kind, members and members[0]["member_id"]) for offset, kind, members in rows] == [
        (5, "consumer_group_current_member_assignment_tombstone", "m"),
        (6, "consumer_group_target_assignment_member_tombstone", "m"),
        (7, "consumer_group_member_metadata_tombstone", "m"),
        (8, "consumer_group_target_assignment_metadata_tombstone", None),
        (9, "consumer_group_metadata_tombstone", None),
    ]


def test_topic_names_maps_the_catalogue_ids_the_records_carry(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.create_topic("t", 1)
        log.consumer_group_epoch("g", 1, [Member("m", assignment={"t": [0]})], 1000)

    (assigned,) = _rows(tmp_path, "members")[-1][0]
    assert topic_names(str(tmp_path))[assigned["assignment"][0]["topic"]] == "t"


def test_transactional_commits_carry_their_producer_and_markers_are_rows(tmp_path: Path) -> None:
    with SyntheticLog(tmp_path, offsets_partitions=1) as log:
        log.commit("g", "t", 0, 1, 1000)
        log.txn_commit_many("g", 7, [("t", 0, 5)], 2000)
        log.txn_commit_many("g", 8, [("t", 0, 6)], 2100)
        log.end_txn("g", 8, 2200, commit=False)
        log.end_txn("g", 7, 2300)

    rows = _rows(tmp_path, "log_offset", "log_ts_ms", "record_type", "group", "committed_offset", "producer_id")

    assert rows == [
        (0, 1000, "offset_commit", "g", 1, None),
        (1, 2000, "offset_commit", "g", 5, 7),
        (2, 2100, "offset_commit", "g", 6, 8),
        (3, 2200, "txn_abort", None, None, 8),
        (4, 2300, "txn_commit", None, None, 7),
    ]


def test_a_control_record_that_is_no_marker_is_an_undecodable_row() -> None:
    record = Record(offset_delta=0, timestamp_delta=0, key=b"\x00", value=None)
    batch = RecordBatch.from_records(
        [record], base_offset=4, base_timestamp=10, producer_id=3, is_transactional=True, is_control=True
    )

    cols = decode_offsets_range(encode_batch(batch), 0, 0)

    assert (cols["log_offset"], cols["record_type"], cols["producer_id"]) == ([4], ["undecodable"], [3])
    assert cols["error"][0].startswith("control record: ")
