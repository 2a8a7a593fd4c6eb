"""A KIP-848 consumer group stopped mid-reconciliation survives a broker restart, SIGKILL included (issue #14,
"Restart the broker mid-reconciliation: the group resumes with the same epochs").

Two raw-wire members (tests/support/consumer_member.py) step the group by hand: m1 owns the four partitions and
commits offsets; m2 joins, and m1 is told to revoke two partitions it has not released yet, so m2 waits for them.
The broker answers each heartbeat only once its records are durable, so killing it right after that answer must
lose nothing: the restarted broker, on the same data directory, describes the group exactly as before (epochs,
member epochs, current and target assignments, Reconciling), and m1's acknowledgement of the revocation then moves
the partitions to m2 as if the broker had never gone away.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol.errors import ErrorCode
from protocol.messages.consumer_group_describe import Assignment, ConsumerGroupDescribeRequest, DescribedGroup
from protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from protocol.registry import ApiKey
from tests.durability.offsets_client import connect, create_topic, fetch
from tests.support.broker_process import BrokerProcess
from tests.support.consumer_member import STEPWISE_SETTINGS, WireMember

TOPIC = "restart-cg-topic"
GROUP = "restart-cg"
PARTITIONS = [0, 1, 2, 3]
COMMITTED = {0: 10, 1: 11, 2: 12, 3: 13}


async def _describe(port: int) -> DescribedGroup:
    client = await connect(port)
    try:
        response = await client.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ConsumerGroupDescribeRequest(group_ids=[GROUP]))
    finally:
        await client.close()
    [group] = response.groups
    assert group.error_code == ErrorCode.NONE, group
    group.members.sort(key=lambda m: m.member_id)
    return group  # type: ignore[no-any-return]


def _partitions(assignment: Assignment) -> list[int]:
    return sorted(p for tp in assignment.topic_partitions for p in tp.partitions)


async def _commit(port: int, member: WireMember, offsets: dict[int, int]) -> None:
    """OffsetCommit v9 (the consumer protocol's: generation = member epoch) from the member."""
    client = await connect(port)
    request = OffsetCommitRequest(
        group_id=GROUP,
        generation_id_or_member_epoch=member.epoch,
        member_id=member.member_id,
        topics=[
            OffsetCommitRequestTopic(
                name=TOPIC,
                partitions=[
                    OffsetCommitRequestPartition(partition_index=p, committed_offset=o) for p, o in offsets.items()
                ],
            )
        ],
    )
    try:
        response = await client.call(ApiKey.OFFSET_COMMIT, 9, request)
    finally:
        await client.close()
    assert {p.error_code for t in response.topics for p in t.partitions} == {ErrorCode.NONE}, response


def _owned(member: WireMember) -> list[int]:
    return sorted(p for tp in member.owned for p in tp.partitions)


def _reconnected(bootstrap: str, old: WireMember) -> WireMember:
    """The same member on a new connection (the broker's restart closed the old one), at the epoch it last had and
    owning what it was last told to own."""
    old.close()
    member = WireMember(bootstrap, GROUP, old.member_id)
    member.epoch, member.owned = old.epoch, old.owned
    return member


def _stop(broker: BrokerProcess, how: str) -> None:
    if how == "sigkill":
        broker.kill()
    else:
        assert broker.stop() == 0


@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
async def test_a_group_restarted_mid_reconciliation_resumes_with_the_same_epochs(tmp_path: Path, how: str) -> None:
    broker = BrokerProcess(tmp_path / "data", dict(STEPWISE_SETTINGS))
    bootstrap = broker.start()
    members: list[WireMember] = []
    try:
        client = await connect(broker.port)
        await create_topic(client, TOPIC, len(PARTITIONS))
        await client.close()
        m1 = WireMember(bootstrap, GROUP, "m1")
        m2 = WireMember(bootstrap, GROUP, "m2")
        members += [m1, m2]
        m1.join([TOPIC])
        m1.heartbeat()
        assert (m1.epoch, m1.owned_partitions()) == (2, 4)
        await _commit(broker.port, m1, COMMITTED)
        assert m2.join([TOPIC]).error_code == ErrorCode.NONE
        assert m2.owned_partitions() == 0  # its partitions are still m1's
        revoke = m1.heartbeat()  # told to give two partitions up; its next heartbeat would acknowledge that
        assert (revoke.member_epoch, m1.owned_partitions()) == (2, 2)
        before = await _describe(broker.port)
        assert (before.group_state, before.group_epoch, before.assignment_epoch) == ("Reconciling", 3, 3)
        assert [(m.member_id, m.member_epoch) for m in before.members] == [("m1", 2), ("m2", 3)]
        kept = _owned(m1)
        moving = sorted(set(PARTITIONS) - set(kept))
        # Kafka describes a member's assigned partitions only: m1's pending revocation shows as its epoch lagging
        assert [_partitions(m.assignment) for m in before.members] == [kept, []]
        assert [_partitions(m.target_assignment) for m in before.members] == [kept, moving]

        _stop(broker, how)
        bootstrap = broker.start()  # same port, same data directory

        after = await _describe(broker.port)
        assert after == before  # every epoch, member and assignment, current and target; still Reconciling
        client = await connect(broker.port)
        assert await fetch(client, GROUP, TOPIC, PARTITIONS) == COMMITTED
        await client.close()

        m1, m2 = _reconnected(bootstrap, m1), _reconnected(bootstrap, m2)
        members[:] = [m1, m2]
        waiting = m2.heartbeat()  # m1 has still not released them: m2 gets nothing yet
        assert (waiting.error_code, waiting.member_epoch, _owned(m2)) == (ErrorCode.NONE, 3, [])
        acknowledged = m1.heartbeat()  # m1 now owns only what it keeps: the revocation is done
        assert (acknowledged.error_code, acknowledged.member_epoch) == (ErrorCode.NONE, 3)
        taken = m2.heartbeat()
        assert taken.error_code == ErrorCode.NONE
        assert _owned(m2) == moving
        stable = await _describe(broker.port)
        assert (stable.group_state, stable.group_epoch, stable.assignment_epoch) == ("Stable", 3, 3)
        assert [(m.member_id, m.member_epoch, _partitions(m.assignment)) for m in stable.members] == [
            ("m1", 3, kept),
            ("m2", 3, moving),
        ]
    finally:
        for member in members:
            member.close()
        broker.kill()
