"""Virtual time that cannot trap a test (issue #12): with the clock frozen, what is due now still happens; what
waits on a later virtual instant fails fast, saying which `advance` it needs; and time can be unfrozen again."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.registry import ApiKey
from tests.broker.group_wire import join_and_sync, join_request
from tests.broker.wire import WireClient
from tests.support.clients import kafka_python_member, subscribed_consumer
from toolkit.pytest_plugin import FrozenTimeError, GroupBrokerHandle, GroupNotReadyError

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
        group = await group_broker.wait_for_group("frozen-zero", state="CompletingRebalance", timeout_s=30)
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
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    admin.create_topics([NewTopic("frozen", 2, 1)])
    admin.close()
    group_broker.freeze_time()
    with kafka_python_member(group_broker.bootstrap_servers, ["frozen"], "frozen-kp"):
        group = group_broker.wait_for_group_blocking("frozen-kp", state="Stable", members=1)
        assert group["generation"] >= 1
    [left] = group_broker.requests(api="LeaveGroup", group_id="frozen-kp")
    assert set(left.error_codes) == {0}  # the request and its member
    assert (group_broker.group("frozen-kp") or {}).get("state") == "Empty"


async def _connect(broker: GroupBrokerHandle) -> WireClient:
    return await WireClient.connect(int(broker.bootstrap_servers.rsplit(":", 1)[1]))


async def _frozen_failure(broker: GroupBrokerHandle, group: str, **wanted: Any) -> str:
    """The message of the wait's FrozenTimeError (its kind, not the clock, shows it came before the timeout). The
    groups here have no live client, only silent raw connections, so a short grace suffices (the default 5 s is for
    real clients' heartbeat intervals)."""
    with pytest.raises(FrozenTimeError) as raised:
        await broker.wait_for_group(group, **wanted, timeout_s=120, frozen_grace_s=1.0)
    return str(raised.value)


async def test_a_session_expiry_under_frozen_time_fails_fast_naming_the_member(
    group_broker: GroupBrokerHandle,
) -> None:
    """A member that stopped heartbeating leaves only through its session timeout, which a frozen clock never
    reaches: the wait fails (FrozenTimeError, not the timeout's GroupNotReadyError) naming the member's session
    timer and the `advance` that fires it; the advance then does what the wait wanted."""
    group_broker.freeze_time()
    client = await _connect(group_broker)
    member, _ = await join_and_sync(client, "frozen-session")
    await client.close()  # gone without a LeaveGroup: nobody heartbeats any more
    message = await _frozen_failure(group_broker, "frozen-session", members=0)
    assert "time is frozen: group 'frozen-session' (Stable, generation 1)" in message
    assert f"session of member {member} due at +10000 ms" in message
    assert "call advance(10000)" in message
    group_broker.advance(10_000)
    assert (await group_broker.wait_for_group("frozen-session", members=0, timeout_s=5))["state"] == "Empty"


async def test_a_leader_that_never_syncs_under_frozen_time_fails_fast_naming_the_sync_timer(
    group_broker: GroupBrokerHandle,
) -> None:
    """CompletingRebalance with a silent leader moves on only by the pending-sync timeout (the rebalance timeout)."""
    group_broker.freeze_time()
    client = await _connect(group_broker)
    try:
        first = await client.call(ApiKey.JOIN_GROUP, 5, join_request("frozen-sync", session_ms=45_000))
        joined = await client.call(
            ApiKey.JOIN_GROUP, 5, join_request("frozen-sync", first.member_id, session_ms=45_000)
        )
        assert joined.error_code == ErrorCode.NONE and joined.leader == first.member_id
        message = await _frozen_failure(group_broker, "frozen-sync", state="Stable")
    finally:
        await client.close()
    assert "group 'frozen-sync' (CompletingRebalance, generation 1)" in message
    assert "sync timeout due at +30000 ms" in message
    assert f"session of member {first.member_id} due at +45000 ms" in message
    assert "call advance(30000)" in message


async def test_a_member_that_never_rejoins_under_frozen_time_fails_fast_naming_the_rebalance_timeout(
    group_broker: GroupBrokerHandle,
) -> None:
    """A second member's join starts a rebalance; the first member, closed without a LeaveGroup, will never rejoin:
    PreparingRebalance moves on only by the rebalance timeout or that member's session timeout, both virtual."""
    group_broker.freeze_time()
    leaving, staying = await _connect(group_broker), await _connect(group_broker)
    joining: asyncio.Task[Any] | None = None
    try:
        gone, _ = await join_and_sync(leaving, "frozen-rejoin")
        await leaving.close()  # gone without a LeaveGroup, never to rejoin
        member = (await staying.call(ApiKey.JOIN_GROUP, 5, join_request("frozen-rejoin"))).member_id
        joining = asyncio.create_task(staying.call(ApiKey.JOIN_GROUP, 5, join_request("frozen-rejoin", member)))
        message = await _frozen_failure(group_broker, "frozen-rejoin", state="CompletingRebalance")
        group_broker.advance(10_000)  # what the message says: the silent member's session ends, the join completes
        assert (await joining).error_code == ErrorCode.NONE
    finally:
        if joining is not None:
            joining.cancel()  # done unless the test failed before it completed
        await staying.close()
    assert "group 'frozen-rejoin' (PreparingRebalance, generation 1)" in message
    assert "join/rebalance due at +30000 ms" in message
    assert f"session of member {gone} due at +10000 ms" in message
    assert "call advance(10000)" in message


@contextlib.contextmanager
def _polling(broker: GroupBrokerHandle, topic: str, group: str) -> Iterator[Any]:
    """A kafka-python consumer polled in its own thread, as an application would, until the block ends."""
    consumer = subscribed_consumer([topic], bootstrap_servers=broker.bootstrap_servers, group_id=group)
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            consumer.poll(timeout_ms=50)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield consumer
    finally:
        stop.set()
        thread.join()
        consumer.close()


def test_live_consumers_joining_under_frozen_time_are_waited_for_not_failed(group_broker: GroupBrokerHandle) -> None:
    """The wait must not fail while live clients can still satisfy it: a first consumer joins under frozen time
    (initial delay 0), then a second one joins and the first rejoins only on its next heartbeat (every 3 s of
    real time), a quiet stretch with the group's session timers pending that is no reason to give up."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    admin.create_topics([NewTopic("frozen-live", 2, 1)])
    admin.close()
    group_broker.freeze_time()
    with _polling(group_broker, "frozen-live", "frozen-live-g"):
        first = group_broker.wait_for_group_blocking("frozen-live-g", state="Stable", members=1, timeout_s=60)
        with _polling(group_broker, "frozen-live", "frozen-live-g"):
            both = group_broker.wait_for_group_blocking(
                "frozen-live-g", state="Stable", members=2, generation_at_least=first["generation"] + 1, timeout_s=60
            )
    assert both["generation"] > first["generation"]
    assert group_broker.clock()["frozen"] is True
