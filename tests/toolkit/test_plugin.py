"""The pytest plugin's fixture and controls, each shown by what a real client (aiokafka) experiences."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from protocol.errors import ErrorCode
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async
from tests.support.clients import aiokafka_until
from toolkit.pytest_plugin import GroupBrokerHandle

TOPIC = "toolkit"
# ConsumerProtocolSubscription v0: topics ["toolkit"], null user data
SUBSCRIPTION = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x07toolkit" + b"\xff\xff\xff\xff"


async def _setup_topic(broker: GroupBrokerHandle, partitions: int = 4) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic(TOPIC, partitions, 1)])
    await admin.close()


@contextlib.asynccontextmanager
async def _consumer(broker: GroupBrokerHandle, group: str, **settings: int) -> AsyncIterator[AIOKafkaConsumer]:
    consumer = AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        session_timeout_ms=settings.get("session_timeout_ms", 60_000),
        heartbeat_interval_ms=settings.get("heartbeat_interval_ms", 200),
        retry_backoff_ms=50,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        yield consumer
    finally:
        await consumer.stop()


async def _produce(broker: GroupBrokerHandle, count: int, prefix: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    await producer.start()
    for i in range(count):
        await producer.send_and_wait(TOPIC, key=str(i).encode(), value=f"{prefix}-{i}".encode())
    await producer.stop()


async def _silent_member(broker: GroupBrokerHandle, group: str, session_timeout_ms: int) -> WireClient:
    """A raw member that joins, syncs, and then never heartbeats again (a frozen process)."""
    port = int(broker.bootstrap_servers.rsplit(":", 1)[1])
    client = await WireClient.connect(port)
    join = JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_timeout_ms,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=[
            JoinGroupRequestProtocol(
                name="roundrobin", metadata=b"\x00\x00\x00\x00\x00\x01\x00\x07toolkit\xff\xff\xff\xff"
            )
        ],
    )
    first = await client.call(ApiKey.JOIN_GROUP, 5, join)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    join.member_id = first.member_id
    joined = await client.call(ApiKey.JOIN_GROUP, 5, join)
    assert joined.error_code == ErrorCode.NONE
    synced = await client.call(
        ApiKey.SYNC_GROUP,
        3,
        SyncGroupRequest(group_id=group, generation_id=joined.generation_id, member_id=joined.member_id),
    )
    assert synced.error_code == ErrorCode.NONE
    return client


async def test_advance_past_a_silent_members_session_rebalances_the_live_consumer(
    group_broker: GroupBrokerHandle,
) -> None:
    await _setup_topic(group_broker)
    async with _consumer(group_broker, "adv") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 4, what="4 assigned partitions")
        join_task = asyncio.ensure_future(_silent_member(group_broker, "adv", session_timeout_ms=5_000))
        await aiokafka_until(consumer, join_task.done, what="the silent member to join")
        silent = join_task.result()
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 2, what="2 assigned partitions")
        before = group_broker.group("adv")
        assert before is not None and len(before["members"]) == 2
        group_broker.advance(5_001)  # the silent member's session runs out; the live one (60 s) is fine
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 4, what="4 assigned partitions")
        after = await group_broker.wait_for_group("adv", state="Stable", members=1)
        assert after["generation"] > before["generation"]
        await silent.close()


async def test_moved_coordinator_is_rediscovered_and_consumption_continues(group_broker: GroupBrokerHandle) -> None:
    await _setup_topic(group_broker)
    await _produce(group_broker, 8, "before")
    async with _consumer(group_broker, "mover") as consumer:
        seen: list[bytes] = []

        async def poll_into_seen() -> None:
            for messages in (await consumer.getmany(timeout_ms=50)).values():
                seen.extend(m.value for m in messages)

        while len(seen) < 8:
            await poll_into_seen()
        group_broker.move_coordinator("mover")
        await _produce(group_broker, 8, "after")
        while len(seen) < 16:
            await poll_into_seen()
        await consumer.commit()
        errors = [e.error_codes for e in group_broker.requests(group_id="mover")]
        assert any(ErrorCode.NOT_COORDINATOR in codes for codes in errors), "the client saw NOT_COORDINATOR"
        assert group_broker.requests(api="FindCoordinator"), "and looked the coordinator up again"
        committed = await consumer.committed(TopicPartition(TOPIC, 0))
        assert committed is not None and committed >= 0


async def test_failed_offsets_append_fails_the_commit_with_kafkas_remapped_error(
    group_broker: GroupBrokerHandle,
) -> None:
    await _setup_topic(group_broker, partitions=1)
    async with _consumer(group_broker, "failing-commits") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 1, what="1 assigned partition")
        group_broker.fail_next_offsets_append("NOT_LEADER_OR_FOLLOWER")
        tp = TopicPartition(TOPIC, 0)
        with contextlib.suppress(Exception):
            await consumer.commit({tp: 5})  # aiokafka may retry after rediscovering the coordinator
        commits = group_broker.requests(api="OffsetCommit", group_id="failing-commits")
        # rule #34: a NOT_LEADER_OR_FOLLOWER append error reaches the client as NOT_COORDINATOR
        assert ErrorCode.NOT_COORDINATOR in commits[0].error_codes
        await consumer.commit({tp: 6})
        assert await consumer.committed(tp) == 6


async def test_injected_heartbeat_error_makes_the_client_rejoin(group_broker: GroupBrokerHandle) -> None:
    await _setup_topic(group_broker)
    async with _consumer(group_broker, "injected") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 4, what="4 assigned partitions")
        generation = (await group_broker.wait_for_group("injected", state="Stable"))["generation"]
        group_broker.inject_error("Heartbeat", "REBALANCE_IN_PROGRESS", group_id="injected")
        await aiokafka_until(
            consumer,
            lambda: (group_broker.group("injected") or {}).get("generation", 0) > generation,
            what=f"a generation after {generation}",
        )
        heartbeats = group_broker.requests(api=ApiKey.HEARTBEAT, group_id="injected")
        assert any(ErrorCode.REBALANCE_IN_PROGRESS in e.error_codes for e in heartbeats)


async def test_expire_member_and_force_rebalance_are_seen_by_the_client(group_broker: GroupBrokerHandle) -> None:
    await _setup_topic(group_broker)
    async with _consumer(group_broker, "ops") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 4, what="4 assigned partitions")
        snapshot = await group_broker.wait_for_group("ops", state="Stable", members=1)
        assert group_broker.force_rebalance("ops")
        await aiokafka_until(
            consumer,
            lambda: (group_broker.group("ops") or {}).get("generation", 0) > snapshot["generation"],
            what=f"a generation after {snapshot['generation']}",
        )
        member = (await group_broker.wait_for_group("ops", state="Stable"))["members"][0]
        assert group_broker.expire_member("ops", member)
        # the client learns it was removed (UNKNOWN_MEMBER_ID) and joins again as a new member
        rejoined = await group_broker.wait_for_group("ops", state="Stable", members=1, generation_at_least=3)
        assert rejoined["members"] != [member]


async def test_dropped_connections_are_survived(group_broker: GroupBrokerHandle) -> None:
    await _setup_topic(group_broker, partitions=1)
    async with _consumer(group_broker, "resilient") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 1, what="1 assigned partition")
        assert group_broker.drop_connections() >= 1
        await _produce(group_broker, 3, "later")
        seen: list[bytes] = []

        async def consume() -> None:
            for messages in (await consumer.getmany(timeout_ms=50)).values():
                seen.extend(m.value for m in messages)

        await wait_until_async(
            lambda: len(seen) >= 3,
            what="the 3 records produced after the drop",
            detail=lambda: f"{seen=}",
            step=consume,
        )
        assert seen == [b"later-0", b"later-1", b"later-2"]


async def test_a_loading_partition_answers_load_in_progress_until_loaded(group_broker: GroupBrokerHandle) -> None:
    await _setup_topic(group_broker, partitions=1)
    async with _consumer(group_broker, "loading") as consumer:
        await aiokafka_until(consumer, lambda: len(consumer.assignment()) == 1, what="1 assigned partition")
        tp = TopicPartition(TOPIC, 0)
        group_broker.load_partition_for("loading", duration_ms=1_000)
        await consumer.commit({tp: 3})  # aiokafka retries COORDINATOR_LOAD_IN_PROGRESS until the load is done
        assert await consumer.committed(tp) == 3
        commits = group_broker.requests(api="OffsetCommit", group_id="loading")
        assert ErrorCode.COORDINATOR_LOAD_IN_PROGRESS in commits[0].error_codes
        assert commits[-1].error_codes == (ErrorCode.NONE,)


@pytest.mark.parametrize("api", ["ApiVersions"])
async def test_latency_delays_only_the_chosen_api(group_broker: GroupBrokerHandle, api: str) -> None:
    from protocol.messages.api_versions import ApiVersionsRequest
    from protocol.messages.metadata import MetadataRequest

    port = int(group_broker.bootstrap_servers.rsplit(":", 1)[1])
    slow, fast = await WireClient.connect(port), await WireClient.connect(port)
    group_broker.add_latency(api, 400, count=1)
    order: list[str] = []

    async def call(client: WireClient, key: ApiKey, version: int, body: object, name: str) -> None:
        await client.call(key, version, body)
        order.append(name)

    slow_call = asyncio.ensure_future(call(slow, ApiKey.API_VERSIONS, 0, ApiVersionsRequest(), "slow"))
    await asyncio.sleep(0.05)
    await call(fast, ApiKey.METADATA, 1, MetadataRequest(topics=[]), "fast")
    await slow_call
    assert order == ["fast", "slow"]
    await slow.close()
    await fast.close()
