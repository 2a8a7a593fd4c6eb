"""Virtual time that cannot trap a test (issue #12): with the clock frozen, what is due now still happens; what
waits on a later virtual instant fails fast, saying which `advance` it needs; and time can be unfrozen again."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from toolkit.pytest_plugin import GroupBrokerHandle, GroupNotReadyError

SUBSCRIPTION = b"\x00\x00\x00\x00\x00\x01\x00\x07toolkit\xff\xff\xff\xff"


@contextlib.asynccontextmanager
async def _join(broker: GroupBrokerHandle, group: str) -> AsyncIterator[asyncio.Task[Any]]:
    """A raw member's JoinGroup, parked by the coordinator until the join completes (a task to await later)."""
    client = await WireClient.connect(int(broker.bootstrap_servers.rsplit(":", 1)[1]))
    join = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=30_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=SUBSCRIPTION)],
    )
    first = await client.call(ApiKey.JOIN_GROUP, 5, join)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    join.member_id = first.member_id
    joined = asyncio.create_task(client.call(ApiKey.JOIN_GROUP, 5, join))
    try:
        yield joined
    finally:
        joined.cancel()
        await client.close()


async def test_a_join_under_frozen_time_completes_when_the_initial_delay_is_zero(
    group_broker: GroupBrokerHandle,
) -> None:
    group_broker.freeze_time()
    async with _join(group_broker, "frozen-zero") as joined:
        group = await group_broker.wait_for_group("frozen-zero", state="CompletingRebalance", timeout_s=5)
        assert group["generation"] == 1
        assert (await joined).error_code == ErrorCode.NONE
    assert group_broker.clock()["frozen"] is True


@pytest.mark.parametrize("group_broker_config", [{"group.initial.rebalance.delay.ms": "3000"}])
async def test_waiting_on_a_timer_under_frozen_time_fails_fast_naming_the_advance(
    group_broker: GroupBrokerHandle,
) -> None:
    group_broker.freeze_time()
    async with _join(group_broker, "frozen-delay") as joined:
        with pytest.raises(GroupNotReadyError, match=r"time is frozen.*due at \+3000 ms virtual; call advance\(3000\)"):
            await group_broker.wait_for_group("frozen-delay", state="CompletingRebalance", timeout_s=60)
        group_broker.advance(3000)  # what the message says
        assert (await joined).error_code == ErrorCode.NONE
    assert (group_broker.group("frozen-delay") or {}).get("state") == "CompletingRebalance"


def test_unfreeze_time_resumes_real_time_from_the_virtual_instant(group_broker: GroupBrokerHandle) -> None:
    group_broker.freeze_time()
    frozen = group_broker.clock()
    group_broker.advance(60_000)
    group_broker.unfreeze_time()
    resumed = group_broker.clock()
    assert resumed["frozen"] is False
    assert resumed["now_ms"] >= frozen["now_ms"] + 60_000
    assert resumed["wall_ms"] >= frozen["wall_ms"] + 60_000


def test_kafka_python_joins_and_leaves_under_time_frozen_before_its_first_join(
    group_broker: GroupBrokerHandle,
) -> None:
    """The issue's trap, as a user met it: `freeze_time()` before kafka-python's first join left the group
    PreparingRebalance (GroupNotReadyError after 15 s) and `close()` then waited on its LeaveGroup."""
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    admin.create_topics([NewTopic("frozen", 2, 1)])
    admin.close()
    group_broker.freeze_time()
    consumer = KafkaConsumer("frozen", bootstrap_servers=group_broker.bootstrap_servers, group_id="frozen-kp")
    try:
        while not consumer.assignment():
            consumer.poll(timeout_ms=50)
        group = group_broker.wait_for_group_blocking("frozen-kp", state="Stable", members=1)
        assert group["generation"] >= 1
    finally:
        consumer.close()
    [left] = group_broker.requests(api="LeaveGroup", group_id="frozen-kp")
    assert set(left.error_codes) == {0}  # the request and its member
    assert (group_broker.group("frozen-kp") or {}).get("state") == "Empty"
