"""The OffsetCommit floor (bench/commit_floor.py) appends what our broker appends and answers what it answers, so
that ours / floor compares the same work; nothing is timed here."""

from __future__ import annotations

from bench.commit_floor import _answer, plan_commit
from bench.wire_load import request_frame
from broker.offsets_log import _encode_batch, _encode_record
from coordinator.hashing import partition_for
from coordinator.offsets import OffsetAndMetadata
from coordinator.records import offset_commit_record
from protocol import api
from protocol.messages import offset_commit as oc
from protocol.registry import ApiKey

NOW_MS = 1_700_000_000_123


def test_the_floor_writes_our_records_and_our_answer() -> None:
    partitions = [oc.OffsetCommitRequestPartition(partition_index=p, committed_offset=100 + p) for p in range(3)]
    request = oc.OffsetCommitRequest(
        group_id="g",
        generation_id_or_member_epoch=-1,
        topics=[oc.OffsetCommitRequestTopic(name="t", partitions=partitions)],
    )
    frame = request_frame(ApiKey.OFFSET_COMMIT, 7, request, correlation_id=42)[4:]  # without its size, as read
    plan = plan_commit(frame, NOW_MS)
    ours = [
        _encode_record(
            offset_commit_record(
                "g", "t", p.partition_index, OffsetAndMetadata(100 + p.partition_index, -1, "", NOW_MS)
            )
        )
        for p in partitions
    ]
    assert plan.batch == _encode_batch(ours, NOW_MS)
    assert plan.partition == partition_for("g", 50)
    answer = oc.OffsetCommitResponse(
        topics=[
            oc.OffsetCommitResponseTopic(
                name="t", partitions=[oc.OffsetCommitResponsePartition(partition_index=p) for p in range(3)]
            )
        ]
    )
    assert _answer(42, plan.answer_tail) == api.encode_response(ApiKey.OFFSET_COMMIT, 7, 42, answer)
