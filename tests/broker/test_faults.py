"""Bad clients next to a healthy consumer group: each fault closes only its own connection with one warning, and a
client that vanishes in the middle of a rebalance is handled exactly as Kafka handles it (by its session timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from broker.app import Broker
from protocol.consumer_protocol import encode_assignment, encode_subscription
from protocol.errors import ErrorCode
from protocol.messages.api_versions import ApiVersionsRequest
from protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from protocol.messages.consumer_protocol_assignment import TopicPartition as AssignedPartitions
from protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from protocol.messages.describe_groups import DescribeGroupsRequest
from protocol.messages.heartbeat import HeartbeatRequest
from protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from protocol.registry import ApiKey
from tests.broker.conftest import broker_config
from tests.broker.wire import NAMED_API_VERSIONS, WireClient

GROUP = "steady"
MAX_FRAME = 64 * 1024
WAIT_S = 10.0  # an upper bound on condition waits, only ever reached when something is broken


Connect = Callable[[Broker], Awaitable[WireClient]]


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """Open raw clients; every one is closed at teardown, also when the test failed half-way."""
    opened: list[WireClient] = []

    async def open_client(broker: Broker) -> WireClient:
        client = await WireClient.connect(broker.ports[0])
        opened.append(client)
        return client

    yield open_client
    for client in opened:
        with contextlib.suppress(OSError):
            await client.close()


@pytest.fixture
async def small_broker(tmp_path: Path) -> AsyncIterator[Broker]:
    """A broker with a small `socket.request.max.bytes`, so an oversized frame is cheap to announce."""
    instance = Broker(broker_config(tmp_path, socket_request_max_bytes=str(MAX_FRAME)))
    await instance.start()
    await instance.loaded.wait()
    yield instance
    await instance.stop()


def join_request(member_id: str, session_ms: int) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=30_000,
        member_id=member_id,
        protocol_type="consumer",
        protocols=[
            JoinGroupRequestProtocol(
                name="range", metadata=encode_subscription(ConsumerProtocolSubscription(topics=["orders"]), 1)
            )
        ],
    )


def assignment(partition: int) -> bytes:
    plan = ConsumerProtocolAssignment(assigned_partitions=[AssignedPartitions(topic="orders", partitions=[partition])])
    return encode_assignment(plan, 1)


async def describe(client: WireClient) -> Any:
    [group] = (await client.call(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=[GROUP]))).groups
    return group


async def until(condition: Callable[[], Any]) -> None:
    """Wait for an async condition, polling; bounded so a broken broker fails the test instead of hanging it."""

    async def poll() -> None:
        while True:
            if await condition():
                return
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), WAIT_S)


@dataclass
class Member:
    client: WireClient
    session_ms: int = 10_000
    member_id: str = ""
    generation: int = -1
    heartbeats: list[int] = field(default_factory=list)

    async def join(self) -> Any:
        """JoinGroup v5, doing the KIP-394 round trip first when this member has no id yet."""
        if not self.member_id:
            first = await self.client.call(ApiKey.JOIN_GROUP, 5, join_request("", self.session_ms))
            assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
            self.member_id = first.member_id
        joined = await self.client.call(ApiKey.JOIN_GROUP, 5, join_request(self.member_id, self.session_ms))
        assert joined.error_code == ErrorCode.NONE, joined
        self.generation = joined.generation_id
        return joined

    async def sync(self, plan: dict[str, bytes] | None = None) -> bytes:
        request = SyncGroupRequest(
            group_id=GROUP,
            generation_id=self.generation,
            member_id=self.member_id,
            assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a) for m, a in (plan or {}).items()],
        )
        synced = await self.client.call(ApiKey.SYNC_GROUP, 3, request)
        assert synced.error_code == ErrorCode.NONE, synced
        return bytes(synced.assignment)

    async def heartbeat(self) -> int:
        request = HeartbeatRequest(group_id=GROUP, generation_id=self.generation, member_id=self.member_id)
        error = (await self.client.call(ApiKey.HEARTBEAT, 3, request)).error_code
        self.heartbeats.append(error)
        return int(error)


async def two_member_group(broker: Broker, connect: Connect) -> tuple[Member, Member]:
    """Leader and follower, Stable in generation 2 (the follower's join triggers the second rebalance)."""
    leader = Member(await connect(broker))
    follower = Member(await connect(broker))
    await leader.join()
    await leader.sync({leader.member_id: assignment(0)})
    follower_joined = asyncio.create_task(follower.join())
    await until(lambda: _rebalancing(leader))
    joined = await leader.join()
    await follower_joined
    assert joined.leader == leader.member_id and len(joined.members) == 2
    plan = {leader.member_id: assignment(0), follower.member_id: assignment(1)}
    follower_synced = asyncio.create_task(follower.sync())
    assert await leader.sync(plan) == assignment(0)
    assert await follower_synced == assignment(1)
    leader.heartbeats.clear()
    return leader, follower


async def _rebalancing(member: Member) -> bool:
    return await member.heartbeat() == ErrorCode.REBALANCE_IN_PROGRESS


@contextlib.asynccontextmanager
async def heartbeating(*members: Member) -> AsyncIterator[None]:
    """Each member heartbeats in a loop on its own connection for the duration of the block."""
    stop = asyncio.Event()

    async def loop(member: Member) -> None:
        while True:
            await member.heartbeat()  # at least one, also when the block is over at once
            if stop.is_set():
                return
            await asyncio.sleep(0.005)

    tasks = [asyncio.create_task(loop(m)) for m in members]
    try:
        yield
    finally:
        stop.set()
        await asyncio.gather(*tasks)


# ---------------------------------------------------------------------------------------------------------------
# Bad connections next to a healthy group
# ---------------------------------------------------------------------------------------------------------------


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


FAULTS: dict[str, bytes] = {
    # api key 0x1234 does not exist
    "unknown-api-key": frame(struct.pack(">hhih", 0x1234, 0, 1, -1) + b"\x00\x01x"),
    # a known key at a version nobody serves
    "unserved-version": frame(struct.pack(">hhih", ApiKey.PRODUCE, 2, 1, -1)),
    # a frame too short to hold a request header
    "garbage-header": frame(b"\x07"),
    # a Produce v9 whose body is noise: a body that cannot be read closes the connection, as in Kafka
    "garbage-body": frame(struct.pack(">hhih", ApiKey.PRODUCE, 9, 1, -1) + b"\xff" * 16),
    # a size prefix beyond socket.request.max.bytes: refused before anything is buffered
    "oversized-frame": struct.pack(">i", MAX_FRAME + 1),
    "negative-size": struct.pack(">i", -8),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_a_bad_connection_is_closed_alone_with_one_warning(
    small_broker: Broker, connect: Connect, fault: str
) -> None:
    leader, follower = await two_member_group(small_broker, connect)
    observer = await connect(small_broker)
    with capture_logs() as logs:
        async with heartbeating(leader, follower):
            bad = await connect(small_broker)
            bad.writer.write(FAULTS[fault])
            await bad.writer.drain()
            assert await bad.closed_by_peer()
            await bad.close()
            assert (await observer.call(ApiKey.API_VERSIONS, 3, NAMED_API_VERSIONS)).error_code == ErrorCode.NONE
    warnings = [e for e in logs if e["log_level"] != "info" and e["log_level"] != "debug"]
    assert len(warnings) == 1, warnings
    assert warnings[0]["log_level"] == "warning"
    await assert_group_untouched(observer, leader, follower)


async def test_a_disconnect_mid_frame_is_one_warning(small_broker: Broker, connect: Connect) -> None:
    leader, follower = await two_member_group(small_broker, connect)
    observer = await connect(small_broker)
    with capture_logs() as logs:
        async with heartbeating(leader, follower):
            quitter = await connect(small_broker)
            quitter.writer.write(struct.pack(">i", 64) + struct.pack(">hhih", ApiKey.HEARTBEAT, 3, 1, -1))
            await quitter.writer.drain()
            await quitter.close()

            async def warned() -> bool:
                return any(e["log_level"] == "warning" for e in logs)

            await until(warned)
            assert (await observer.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
    warnings = [e for e in logs if e["log_level"] != "info" and e["log_level"] != "debug"]
    assert [e["event"] for e in warnings] == ["connection.eof_mid_frame"]
    await assert_group_untouched(observer, leader, follower)


async def assert_group_untouched(observer: WireClient, leader: Member, follower: Member) -> None:
    for member in (leader, follower):
        assert member.heartbeats and set(member.heartbeats) == {ErrorCode.NONE}, member.heartbeats
    group = await describe(observer)
    assert group.group_state == "Stable"
    assert sorted(m.member_id for m in group.members) == sorted([leader.member_id, follower.member_id])
    assert leader.generation == follower.generation == 2


# ---------------------------------------------------------------------------------------------------------------
# A client that vanishes while its JoinGroup is parked
# ---------------------------------------------------------------------------------------------------------------


async def test_a_vanished_client_with_a_parked_join_stays_a_member_until_its_session_expires(
    broker: Broker, connect: Connect
) -> None:
    await broker.loaded.wait()
    observer = await connect(broker)
    stayer = Member(await connect(broker))
    await stayer.join()
    await stayer.sync({stayer.member_id: assignment(0)})

    ghost_client = await connect(broker)
    ghost = Member(ghost_client, session_ms=300)
    first = await ghost_client.call(ApiKey.JOIN_GROUP, 5, join_request("", ghost.session_ms))
    ghost.member_id = first.member_id
    _, parked = ghost_client.frame(ApiKey.JOIN_GROUP, 5, join_request(ghost.member_id, ghost.session_ms))

    with capture_logs() as logs:
        ghost_client.writer.write(parked)
        await ghost_client.writer.drain()

        async def parked_in_group() -> bool:
            return len((await describe(observer)).members) == 2

        await until(parked_in_group)
        await ghost_client.close()  # vanishes without a LeaveGroup, its JoinGroup still parked

        # Kafka does not tie membership to a connection: the member stays, and the rebalance completes with it
        group = await describe(observer)
        assert group.group_state == "PreparingRebalance"
        assert ghost.member_id in {m.member_id for m in group.members}
        await until(lambda: _rebalancing(stayer))
        joined = await stayer.join()
        assert joined.generation_id == 2
        assert sorted(m.member_id for m in joined.members) == sorted([stayer.member_id, ghost.member_id])
        await stayer.sync({stayer.member_id: assignment(0), ghost.member_id: assignment(1)})

        # ... until its session timeout passes without a heartbeat: then it is expired and the group rebalances
        await until(lambda: _rebalancing(stayer))
        joined = await stayer.join()
        assert (joined.generation_id, [m.member_id for m in joined.members]) == (3, [stayer.member_id])
        await stayer.sync({stayer.member_id: assignment(0)})

    expired = [e for e in logs if e["event"] == "member.expired"]
    assert [e["member"] for e in expired] == [ghost.member_id]
    group = await describe(observer)
    assert (group.group_state, [m.member_id for m in group.members]) == ("Stable", [stayer.member_id])
    assert not [e for e in logs if e["log_level"] in ("error", "critical")]
    # the broker is fine: a new connection is served
    fresh = await connect(broker)
    assert (await fresh.call(ApiKey.API_VERSIONS, 0, ApiVersionsRequest())).error_code == ErrorCode.NONE
