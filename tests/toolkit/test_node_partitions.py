"""Partitioning a node from one client (issue #19): the node holds that client's requests unanswered, as a network
partition looks to the client, while it serves everyone else, until the partition heals.

The middleware on its own first (which requests are held, what healing and a closed connection do), then on the
wire against a two-node broker through the pytest handle."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from broker.context import ConnectionSession, RequestContext
from broker.dispatch import Route
from protocol.messages.metadata import MetadataRequest
from protocol.registry import ApiKey
from tests.broker.wire import WireClient
from tests.support.broker_process import wait_until_async
from toolkit.handle import GroupBrokerHandle
from toolkit.node_partitions import NodePartitions

WAIT_S = 10.0  # an upper bound on condition waits, only ever reached when something is broken


async def _answer(ctx: RequestContext, request: Any) -> str:
    return f"answered {ctx.client_id}"


def _ctx(client_id: str, node_id: int | None, correlation_id: int = 1) -> RequestContext:
    session = ConnectionSession(correlation_id, "127.0.0.1", 50000, node_id=node_id)
    return RequestContext(session, ApiKey.METADATA, 12, correlation_id, client_id)


ROUTE = Route(ApiKey.METADATA, 0, 12, _answer)


async def test_only_the_cut_off_clients_requests_to_that_node_wait_until_healed() -> None:
    changes: list[bool] = []
    cuts = NodePartitions(local_node=1, on_change=lambda: changes.append(True))
    assert not cuts.wraps(ROUTE)  # no cut: the middleware is left out of every chain
    assert cuts.cut(2, "held") and not cuts.cut(2, "held")
    assert cuts.wraps(ROUTE) and len(changes) == 1
    held = asyncio.ensure_future(cuts(_ctx("held", 2), ROUTE, None, _answer))
    await wait_until_async(lambda: cuts.in_force()[0]["held"] == 1, WAIT_S, 0, what="the request held")
    assert await cuts(_ctx("other", 2), ROUTE, None, _answer) == "answered other"  # other clients of that node
    assert await cuts(_ctx("held", 3), ROUTE, None, _answer) == "answered held"  # the client on other nodes
    assert not held.done()
    [ended] = cuts.heal(client_id="held")
    assert (ended.node_id, ended.client_id, ended.held_total) == (2, "held", 1)
    assert await held == "answered held"
    assert cuts.in_force() == [] and not cuts.wraps(ROUTE) and len(changes) == 2


async def test_a_one_node_broker_is_its_local_node_and_a_closed_connection_stops_holding() -> None:
    cuts = NodePartitions(local_node=1, on_change=lambda: None)
    cuts.cut(1, "held")
    held = asyncio.ensure_future(cuts(_ctx("held", None), ROUTE, None, _answer))  # the session names no node
    await wait_until_async(lambda: cuts.in_force()[0]["held"] == 1, WAIT_S, 0, what="the request held")
    held.cancel()  # what closing the connection does to its parked handler
    with pytest.raises(asyncio.CancelledError):
        await held
    assert cuts.in_force() == [{"node_id": 1, "client_id": "held", "held": 0, "held_total": 1}]
    assert cuts.heal(node_id=2) == []  # another node's partitions: none
    assert [c.client_id for c in cuts.heal(node_id=1)] == ["held"]


@pytest.fixture
def group_broker_config() -> dict[str, str]:
    return {"cluster.nodes": "2"}


async def _metadata(client: WireClient, client_id: str) -> int:
    """Send a Metadata request as `client_id` without waiting for its answer; returns its correlation id."""
    correlation_id, frame = client.frame(ApiKey.METADATA, 12, MetadataRequest(topics=[]), client_id=client_id)
    client.writer.write(frame)
    await client.writer.drain()
    return correlation_id


async def _answered(client: WireClient, correlation_id: int) -> None:
    frame = await asyncio.wait_for(client.read_frame(), WAIT_S)
    assert int.from_bytes(frame[:4], "big", signed=True) == correlation_id


async def test_a_partitioned_clients_requests_get_no_answer_while_another_clients_do(
    group_broker: GroupBrokerHandle,
) -> None:
    ports = [int(server.rsplit(":", 1)[1]) for server in group_broker.bootstrap_servers.split(",")]
    clients: list[WireClient] = []

    async def connect(port: int) -> WireClient:
        clients.append(await WireClient.connect(port))
        return clients[-1]

    try:
        held, other, held_elsewhere = await connect(ports[0]), await connect(ports[0]), await connect(ports[1])
        assert group_broker.partition_node(1, "held")
        first = await _metadata(held, "held")
        held_by_node_1 = lambda: group_broker.node_partitions()[0]["held"] == 1  # noqa: E731 - read, then held
        await wait_until_async(held_by_node_1, WAIT_S, 0.01, what="the request held by node 1")
        await _answered(other, await _metadata(other, "other"))  # node 1 serves the other client
        await _answered(held_elsewhere, await _metadata(held_elsewhere, "held"))  # node 2 serves the held client
        assert group_broker.node_partitions()[0]["held"] == 1  # still no answer to the held request
        assert group_broker.heal_partitions() == [{"node_id": 1, "client_id": "held", "held_total": 1}]
        await _answered(held, first)  # the held request is answered once the partition heals
        await _answered(held, await _metadata(held, "held"))  # and the next at once
        await _answered(other, await _metadata(other, "other"))
        with pytest.raises(ValueError, match="no node 7"):
            group_broker.partition_node(7, "held")
    finally:
        for client in clients:
            await client.close()
